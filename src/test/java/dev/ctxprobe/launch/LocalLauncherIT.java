package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.Ended;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.testengine.TestEngine;
import dev.ctxprobe.testengine.TestEngines;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicBoolean;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The launcher against real process trees: the shell here plays an engine that spawns workers. */
class LocalLauncherIT {
    @TempDir
    Path dir;

    private final List<ServerHandle> started = new ArrayList<>();

    @AfterEach
    void stopAll() {
        started.forEach(ServerHandle::stop);
    }

    private ServerHandle launch(String script, Duration startup, Duration shutdown) throws Exception {
        Ledger ledger = new Ledger(dir);
        int port = Ports.free();
        LaunchSpec spec = new LaunchSpec(
                "s",
                List.of("sh", "-c", script),
                Map.of("CTXPROBE_TEST_VAR", "hello", "CTXPROBE_PORT", Integer.toString(port)),
                dir.resolve("logs/s.log"),
                "127.0.0.1",
                port,
                "/health",
                Engines.profile("vllm").readyLines(),
                startup,
                shutdown,
                LaunchSpec.NO_QUEUE);
        ServerHandle h = new LocalLauncher(ledger, null).launch(spec);
        started.add(h);
        return h;
    }

    @Test
    void theServerLeadsItsOwnProcessGroupAndItsWorkersDieWithIt() throws Exception {
        ServerHandle h = launch(
                "sleep 300 & sleep 300 & echo $CTXPROBE_TEST_VAR; wait", Duration.ofSeconds(1), Duration.ofSeconds(5));
        assertThat(ProcessGroups.groupOf(h.pid())).isEqualTo(h.pid());
        awaitMembers(h.pid(), 3);
        assertThat(h.id()).isEqualTo("local:" + h.pid());
        assertThat(Ledger.read(dir.resolve(Ledger.NAME))).singleElement().satisfies(e -> {
            assertThat(e.kind()).isEqualTo("local");
            long pgid = Long.parseLong(e.fields().get(0));
            long start = Long.parseLong(e.fields().get(1));
            String boot = e.fields().get(2);
            String mark = e.fields().get(3);
            assertThat(pgid).isEqualTo(h.pid());
            assertThat(LocalLauncher.liveMembers(pgid, start, boot, mark)).contains(h.pid());
            // The same group id with another start time is someone else's group: never ours to stop.
            assertThat(LocalLauncher.liveMembers(pgid, start - 1, boot, mark)).isEmpty();
            assertThat(LocalLauncher.liveMembers(pgid, start, "another-boot", mark))
                    .isEmpty();
        });

        StopReport stop = h.stop();

        assertThat(stop.stoppedCleanly()).isTrue();
        assertThat(stop.leftoverPids()).isEmpty();
        assertThat(ProcessGroups.members(h.pid())).isEmpty();
        assertThat(Ledger.read(dir.resolve(Ledger.NAME))).isEmpty();
        assertThat(Files.readString(dir.resolve("logs/s.log"))).contains("hello");
    }

    @Test
    void aGroupThatIgnoresTermIsKilled() throws Exception {
        ServerHandle h =
                launch("trap '' TERM; sleep 300 & wait; sleep 300", Duration.ofSeconds(1), Duration.ofMillis(500));
        awaitMembers(h.pid(), 2);

        StopReport stop = h.stop();

        assertThat(stop.stoppedCleanly()).isFalse();
        assertThat(stop.leftoverPids()).isEmpty();
        assertThat(ProcessGroups.members(h.pid())).isEmpty();
    }

    @Test
    void aCtrlCAtTheMomentOfLaunchStillReturnsAServerThatLeadsItsGroup() throws Exception {
        Thread.currentThread().interrupt();
        ServerHandle h;
        try {
            h = launch("sleep 300 & wait", Duration.ofSeconds(1), Duration.ofSeconds(5));
            // Read at once: a launch that returned before setsid ran would hand over a group that a stop misses.
            assertThat(ProcessGroups.groupOf(h.pid())).isEqualTo(h.pid());
        } finally {
            assertThat(Thread.interrupted())
                    .as("the interrupt is kept for the run to see")
                    .isTrue();
        }

        StopReport stop = h.stop();

        assertThat(stop.leftoverPids()).isEmpty();
        assertThat(ProcessGroups.members(h.pid())).isEmpty();
    }

    @Test
    void aStopCutShortByASecondCtrlCStillWaitsUntilTheKilledGroupIsGone() throws Exception {
        // A JVM that ignores TERM, like an engine busy on its accelerator: only KILL ends it, and not instantly.
        ServerHandle h = launch(
                "exec '" + TestEngines.javaBin() + "' -cp '" + TestEngines.classpath() + "' "
                        + TestEngine.class.getName() + " --port $CTXPROBE_PORT --fault ignore-sigterm",
                Duration.ofSeconds(20),
                Duration.ofSeconds(30));
        assertThat(h.awaitReady()).isInstanceOf(Readiness.Ready.class);

        Thread.currentThread().interrupt();
        StopReport stop;
        try {
            stop = h.stop();
        } finally {
            assertThat(Thread.interrupted())
                    .as("the interrupt is kept for the run to see")
                    .isTrue();
        }

        assertThat(stop.stoppedCleanly()).isFalse();
        assertThat(stop.leftoverPids()).isEmpty();
        assertThat(stop.ended()).as("the killed leader was waited for").isNotNull();
        assertThat(stop.ended().signal()).isEqualTo(9);
        assertThat(stop.ended().reason()).isEqualTo(Ended.Reason.STOPPED);
        assertThat(stop.took()).as("the second Ctrl-C skips the TERM wait").isLessThan(Duration.ofSeconds(30));
        assertThat(ProcessGroups.members(h.pid())).isEmpty();
        assertThat(Ledger.read(dir.resolve(Ledger.NAME))).isEmpty();
    }

    @Test
    void anExitDuringStartupIsSeenWithItsCode() throws Exception {
        ServerHandle h = launch("echo 'ValueError: no'; exit 3", Duration.ofSeconds(30), Duration.ofSeconds(5));
        Readiness r = h.awaitReady();
        assertThat(r)
                .isInstanceOfSatisfying(
                        Readiness.Exited.class, x -> assertThat(x.how()).isEqualTo(Termination.exited(3)));
        assertThat(r.after()).isLessThan(Duration.ofSeconds(10));
    }

    /**
     * A server that says why and exits at once, on a machine busy with other work: its exit may be seen before its
     * line has left the pipe, and the step is judged from the log. Every launch must be judged from the whole log,
     * whatever the scheduler does (an idle reader is not a finished one).
     */
    @Test
    void aFastExitIsJudgedFromItsWholeLogUnderLoad() throws Exception {
        EngineProfile llamacpp = Engines.profile("llamacpp");
        AtomicBoolean busy = new AtomicBoolean(true);
        List<Thread> load = new ArrayList<>();
        for (int i = 0; i < 2 * Runtime.getRuntime().availableProcessors(); i++) {
            load.add(Thread.ofPlatform().daemon().start(() -> {
                long x = 0;
                while (busy.get()) {
                    x += System.nanoTime() % 7;
                }
                if (x == 42) {
                    System.out.print("");
                }
            }));
        }
        try {
            for (int launch = 1; launch <= 50; launch++) {
                ServerHandle h = launch(
                        "echo 'error: invalid argument: --no-such-flag' >&2; exit 1",
                        Duration.ofSeconds(30),
                        Duration.ofSeconds(5));
                Readiness r = h.awaitReady();
                assertThat(r).as("launch %d", launch).isInstanceOf(Readiness.Exited.class);
                List<String> log = ServerLog.lines(dir.resolve("logs/s.log"));
                assertThat(log).as("launch %d", launch).contains("error: invalid argument: --no-such-flag");
                assertThat(llamacpp.diagnoseStartup(1, log))
                        .as("launch %d", launch)
                        .hasValueSatisfying(d -> assertThat(d.failureClass()).isEqualTo(FailureClass.CONFIG_REJECTED));
                h.stop();
                started.remove(h);
            }
        } finally {
            busy.set(false);
            for (Thread t : load) {
                t.join();
            }
        }
    }

    /** A kill -9 from outside is no out-of-memory kill where the kernel's count says so. */
    @Test
    void aSigkillFromOutsideIsNotCalledTheOomKillers() throws Exception {
        ServerHandle h = launch("kill -9 $$", Duration.ofSeconds(30), Duration.ofSeconds(5));
        Readiness r = h.awaitReady();
        assertThat(r).isInstanceOfSatisfying(Readiness.Exited.class, x -> {
            assertThat(x.how().signal()).isEqualTo(9);
            if (OomKills.count() != null) {
                assertThat(x.how().reason()).isEqualTo(Ended.Reason.EXITED);
                assertThat(x.how().detail()).startsWith("killed from outside: not the OOM killer");
            }
        });
    }

    @Test
    void aServerThatNeverAnswersTimesOut() throws Exception {
        ServerHandle h = launch("sleep 300", Duration.ofMillis(700), Duration.ofSeconds(5));
        Readiness r = h.awaitReady();
        assertThat(r).isInstanceOf(Readiness.TimedOut.class);
        assertThat(((Readiness.TimedOut) r).lastAnswer()).isEqualTo("connection refused");
        assertThat(h.isAlive()).isTrue();
    }

    @Test
    void theLogIsMaskedAndKeepsItsHeadAndTailPastTheCap() throws Exception {
        Ledger ledger = new Ledger(dir);
        int port = Ports.free();
        LaunchSpec spec = new LaunchSpec(
                "chatty",
                List.of(
                        "sh",
                        "-c",
                        "echo first line; echo token sk-0123456789; i=0; while [ $i -lt 20000 ]; do"
                                + " echo filler line $i of the log; i=$((i+1)); done; echo last line"),
                Map.of(),
                dir.resolve("logs/chatty.log"),
                "127.0.0.1",
                port,
                "/health",
                Engines.profile("vllm").readyLines(),
                Duration.ofSeconds(30),
                Duration.ofSeconds(5),
                LaunchSpec.NO_QUEUE);
        LaunchContext context = new LaunchContext(
                dir,
                ledger,
                null,
                dev.ctxprobe.secrets.Redactor.of(java.util.Set.of("K"), List.of(Map.of("K", "sk-0123456789"))),
                List.of(),
                128 * 1024);
        ServerHandle h = new LocalLauncher(context).launch(spec);
        started.add(h);

        assertThat(h.awaitReady()).isInstanceOf(Readiness.Exited.class);

        String log = Files.readString(dir.resolve("logs/chatty.log"));
        assertThat(Files.size(dir.resolve("logs/chatty.log"))).isLessThanOrEqualTo(128 * 1024 + 200);
        assertThat(log)
                .startsWith("first line\ntoken <masked>\n")
                .contains("ctxprobe left out")
                .endsWith("filler line 19999 of the log\nlast line\n")
                .doesNotContain("sk-0123456789");
    }

    @Test
    void aBusyPortIsSeen() throws Exception {
        try (var ss = new java.net.ServerSocket(0, 1, java.net.InetAddress.getLoopbackAddress())) {
            assertThat(Ports.busy("127.0.0.1", ss.getLocalPort())).isTrue();
        }
        assertThat(Ports.busy("127.0.0.1", Ports.free())).isFalse();
    }

    private static void awaitMembers(long pgid, int n) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(10).toNanos();
        while (ProcessGroups.members(pgid).size() < n && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertThat(ProcessGroups.members(pgid)).hasSizeGreaterThanOrEqualTo(n);
    }
}
