package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.cli.FaultRuns.Backend;
import dev.ctxprobe.launch.ProcessGroups;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;

/**
 * Issue 14, failure 3: a worker that calls setpgid and a daemon that double-forks with setsid leave the server's
 * group, and used to survive every stop. The launch's mark finds them; the step names them and none remains, after a
 * normal stop and after a SIGKILLed run's resume.
 */
class EscapeIT {
    private static final String ESCAPES = "--fault setpgid-child --fault setsid-daemon";
    private static final Pattern PGCHILD = Pattern.compile("setpgid child pid (\\d+)");
    private static final Pattern DAEMON = Pattern.compile("daemon pid (\\d+)");

    @TempDir
    Path dir;

    private Process ctxprobe;
    private final List<Long> escaped = new ArrayList<>();

    @AfterEach
    void endWhatIsLeft() {
        if (ctxprobe != null && ctxprobe.isAlive()) {
            ctxprobe.destroyForcibly();
        }
        FaultRuns.killMarked(dir.resolve("out"));
        escaped.forEach(pid -> ProcessGroups.signalProcess(pid, true));
    }

    @Test
    void aSetpgidChildAndASetsidDaemonAreStoppedAndNamedByTheStep() throws Exception {
        Path exp = FaultRuns.write(dir, "escape", List.of(1000L), 0, List.of(new Backend("engine", null, ESCAPES)));
        Path out = dir.resolve("out");

        CliRun run = CliRun.of("run", exp.toString(), "--out", out.toString(), "--quiet");

        assertThat(run.exitCode()).as(run.out() + run.err()).isZero();
        Path runDir = FaultRuns.runDir(out, "escape").orElseThrow();
        JsonNode step = FaultRuns.results(runDir).get("scenarios").get(0);
        String log = Files.readString(runDir.resolve(step.get("log").asString()));
        long child = pid(PGCHILD, log);
        long daemon = pid(DAEMON, log);
        JsonNode server = step.get("server");
        long group = server.get("pid").asLong();
        System.out.println("escape: server group " + group + ", setpgid child " + child + ", setsid daemon " + daemon
                + "; the step's outside_group_pids " + server.get("outside_group_pids"));
        assertThat(step.get("outcome").asString()).isEqualTo("ok");
        assertThat(server.get("outside_group_pids").toString())
                .contains(Long.toString(child))
                .contains(Long.toString(daemon));
        assertThat(server.get("leftover_pids")).isEmpty();
        assertThat(server.get("stopped_cleanly").asBoolean()).isTrue();
        FaultRuns.assertProcessGone(child);
        FaultRuns.assertProcessGone(daemon);
        assertThat(FaultRuns.markedProcesses(runDir)).isEmpty();
        assertThat(runDir.resolve("servers.pid"))
                .as("no live group is left to name")
                .doesNotExist();
    }

    @Test
    void aKilledRunsEscapedProcessesAreStoppedByResume() throws Exception {
        // The prefill takes about 2.5 s, so the run is mid-request when it is killed.
        Path exp = FaultRuns.write(
                dir,
                "escapekill",
                List.of(1000L),
                0,
                List.of(new Backend("engine", null, ESCAPES + " --prefill-us-per-token 2500")));
        Path out = dir.resolve("out");
        ctxprobe = FaultRuns.startCtxprobe(dir.resolve("ctxprobe.log"), "run", exp.toString(), "--out", out.toString());
        FaultRuns.awaitServerUp(out, "escapekill", "Application startup complete.", 30);
        // The daemon's line comes from a background shell and may follow the ready line.
        FaultRuns.awaitServerUp(out, "escapekill", "INFO daemon pid", 30);
        Path runDir = FaultRuns.runDir(out, "escapekill").orElseThrow();
        Path logs = runDir.resolve("logs");
        String log;
        try (var files = Files.list(logs)) {
            log = Files.readString(files.findFirst().orElseThrow());
        }
        long child = pid(PGCHILD, log);
        long daemon = pid(DAEMON, log);

        FaultRuns.signal(ctxprobe.pid(), "KILL");
        assertThat(ctxprobe.waitFor(10, TimeUnit.SECONDS)).isTrue();
        assertThat(FaultRuns.markedProcesses(runDir))
                .as("the killed run left its server, the setpgid child and the daemon")
                .contains(child, daemon);

        CliRun resumed = CliRun.of("run", "--resume", runDir.toString(), "--quiet");

        assertThat(resumed.exitCode()).as(resumed.out() + resumed.err()).isZero();
        assertThat(resumed.out()).contains("stopped leftover server group").contains("outside its group");
        System.out.println("escape after SIGKILL, resume said: "
                + resumed.out()
                        .lines()
                        .filter(l -> l.contains("leftover"))
                        .findFirst()
                        .orElse(""));
        FaultRuns.assertProcessGone(child);
        FaultRuns.assertProcessGone(daemon);
        assertThat(FaultRuns.markedProcesses(runDir)).isEmpty();
        assertThat(FaultRuns.results(runDir)
                        .get("scenarios")
                        .get(0)
                        .get("outcome")
                        .asString())
                .isEqualTo("ok");
    }

    private long pid(Pattern p, String log) {
        Matcher m = p.matcher(log);
        assertThat(m.find()).as(p + " in the log:\n" + log).isTrue();
        long pid = Long.parseLong(m.group(1));
        escaped.add(pid);
        return pid;
    }
}
