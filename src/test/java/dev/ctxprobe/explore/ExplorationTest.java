package dev.ctxprobe.explore;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.results.BackendPrediction;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Metadata;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.ResultDocument;
import dev.ctxprobe.results.Scenario;
import dev.ctxprobe.run.Experiments;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Whole explorations in milliseconds: the real strategies, server policy, step lifecycle, judge, scheduler and
 * recorder against {@link MemoryDeployment}, which launches no process and opens no socket.
 */
class ExplorationTest {

    @TempDir
    Path dir;

    /** What the listener heard of backends waiting for their turn under --parallel. */
    private final List<String> waits = new java.util.concurrent.CopyOnWriteArrayList<>();

    @Test
    void aFrontierSearchFollowsTheEnginesRefusalToTheExactLimit() throws Exception {
        MemoryDeployment vllm = new MemoryDeployment(10_000 + 100, Set.of());
        ResultDocument doc = explore(
                experiment(
                        "strategy: frontier\n  frontier: {min: 1024, max: 65536, align: 256, max_launches: 8}\n",
                        "vllm"),
                vllm,
                1);

        Frontier f = doc.frontier().get("vllm");
        // max 65,536 refuses and names 10,100 (max_model_len): 10,000 fits, one align above does not.
        assertThat(f.maxOkTarget()).isEqualTo(9984L);
        assertThat(f.minFailedTarget()).isEqualTo(10_240L);
        assertThat(vllm.launches()).containsExactly(65_636L, 10_084L, 10_340L);
        assertThat(f.launches()).isEqualTo(3);
        assertThat(doc.scenarios())
                .extracting(s -> s.outcome().id())
                .containsExactly("kv_insufficient", "ok", "kv_insufficient");
        assertThat(doc.scenarios()).allSatisfy(s -> assertThat(s.concurrency()).isEqualTo(1));
        assertThat(vllm.live()).as("servers left running").isZero();
    }

    @Test
    void aKeptServerThatTimedOutIsReplacedAndTheStepsAfterItGetANewOne() throws Exception {
        MemoryDeployment vllm = new MemoryDeployment(100_000, Set.of(4096L));
        ResultDocument doc = explore(
                experiment("strategy: list\n  targets: [2048, 4096, 8192, 16384]\n  restart: on_failure\n", "vllm"),
                vllm,
                1);

        // One server at the largest target serves 2,048, times out at 4,096 and is stopped; a new one serves the rest.
        assertThat(vllm.launches()).containsExactly(16_484L, 16_484L);
        assertThat(vllm.requestsPerLaunch()).containsExactly(4, 4);
        List<Scenario> steps = doc.scenarios();
        assertThat(steps).extracting(s -> s.outcome().id()).containsExactly("ok", "timeout", "ok", "ok");
        assertThat(steps.get(1).server().id()).isEqualTo(steps.get(0).server().id());
        assertThat(steps.get(2).server().id())
                .isNotEqualTo(steps.get(1).server().id());
        assertThat(steps.get(1).server().stoppedCleanly())
                .as("the stop is recorded on the step that hung")
                .isTrue();
        assertThat(doc.frontier().get("vllm").launches()).isEqualTo(2);
        assertThat(vllm.live()).isZero();
    }

    @Test
    void aResumedRunProbesOnlyWhatIsLeftAndRefusesStepsThatDoNotFitItsList() throws Exception {
        Experiment e = experiment("strategy: list\n  targets: [1024, 2048, 4096]\n", "vllm");
        ResultDocument whole = explore(e, new MemoryDeployment(100_000, Set.of()), 1);

        // A run killed after its first step: the second step interrupted, the third never started.
        ResultDocument killed = new ResultDocument(
                whole.metadata(),
                whole.config(),
                List.of(
                        whole.scenarios().get(0),
                        whole.scenarios().get(1).toBuilder()
                                .outcome(Outcome.failed(FailureClass.INTERRUPTED), "interrupted", null)
                                .build()),
                Map.of());
        MemoryDeployment again = new MemoryDeployment(100_000, Set.of());
        ResultDocument resumed = explore(e, again, 1, killed);

        assertThat(again.launches()).containsExactly(2148L, 4196L);
        assertThat(resumed.scenarios()).extracting(Scenario::targetLen).containsExactly(1024L, 2048L, 4096L);
        assertThat(resumed.scenarios()).allSatisfy(s -> assertThat(s.success()).isTrue());

        ResultDocument edited = new ResultDocument(
                whole.metadata(), whole.config(), List.of(whole.scenarios().get(2)), Map.of());
        MemoryDeployment untouched = new MemoryDeployment(100_000, Set.of());
        assertThatThrownBy(() -> explore(e, untouched, 1, edited))
                .isInstanceOf(Exploration.ResumeMismatch.class)
                .hasMessage("vllm has steps [4096] where the list is [1024, 2048, 4096]");
        assertThat(untouched.launches()).isEmpty();
    }

    @Test
    void parallelTwoRunsTwoBackendsAtOnceUnlessTheyShareAFixedPort() throws Exception {
        String list = "strategy: list\n  targets: [1024, 2048]\n";
        MemoryDeployment apart = new MemoryDeployment(100_000, Set.of()).overlapping(2);
        ResultDocument doc = explore(experiment(list, "a", "b"), apart, 2);
        assertThat(apart.mostLiveAtOnce()).isEqualTo(2);
        assertThat(doc.scenarios())
                .hasSize(4)
                .allSatisfy(s -> assertThat(s.success()).isTrue());
        assertThat(doc.frontier()).containsOnlyKeys("a", "b");

        MemoryDeployment onePort = new MemoryDeployment(100_000, Set.of()).overlapping(2);
        waits.clear();
        explore(experimentOnPort(list, 31_001, "a", "b"), onePort, 2);
        assertThat(onePort.mostLiveAtOnce())
                .as("backends with one fixed port take turns")
                .isEqualTo(1);
        assertThat(waits).as("said once, before the wait").containsExactly("b: it uses port 31001 like a, which runs");

        MemoryDeployment inTurn = new MemoryDeployment(100_000, Set.of()).overlapping(2);
        explore(experiment(list, "a", "b"), inTurn, 1);
        assertThat(inTurn.mostLiveAtOnce()).isEqualTo(1);
    }

    @Test
    void aPointKeysEveryStep() throws Exception {
        ResultDocument doc = explore(
                experiment("strategy: list\n  targets: [1024]\n", "vllm"), new MemoryDeployment(100_000, Set.of()), 1);
        assertThat(doc.scenarios().getFirst().point()).isEqualTo(Point.of("vllm", 1024));
        assertThat(doc.series(Point.Series.of("vllm"))).hasSize(1);
        assertThat(doc.series(new Point.Series("vllm", Map.of(), 4))).isEmpty();
    }

    @Test
    void aCellThePlanProvesIdenticalInBoundToAMeasuredOneStartsAtItsAnswerAndProvesItInTwoLaunches() throws Exception {
        // Three cells whose flag changes nothing the context flag allows: the engine serves 10,100 in each. The
        // plan predicts 9,728 for all three, set by the context flag, one align short (an engine rule it misses).
        Experiment e = Experiments.loader().parse(dir.resolve("twins.yaml"), """
                experiment: twins
                model: m
                context_pad: 100
                load: {output_len: 1, num_prompts: 1, warmup: 0}
                matrix: {sched: [a, b, c]}
                sweep:
                  strategy: frontier
                  frontier: {min: 1024, max: 65536, align: 256, max_launches: 8}
                backends:
                  - name: vllm
                    engine: vllm
                    command: vllm serve {model} --scheduler {sched} --max-model-len {max_model_len} --port {port}
                """);
        Plan plan = Plan.of(
                e,
                b -> new BackendPrediction(
                        b.name(),
                        "vllm",
                        9728L,
                        Bound.CONTEXT_FLAG,
                        "",
                        9728L,
                        256,
                        100,
                        null,
                        null,
                        null,
                        null,
                        null));
        assertThat(plan.backends())
                .extracting(Plan.BackendPlan::twin)
                .containsExactly(null, "vllm[sched=a]", "vllm[sched=a]");

        MemoryDeployment vllm = new MemoryDeployment(10_100, Set.of());
        ResultDocument doc = explore(plan, vllm, 1, emptyDocument());

        Map<String, Frontier> f = doc.frontier();
        assertThat(f.values()).hasSize(3).allSatisfy(a -> {
            assertThat(a.maxOkTarget()).isEqualTo(9984L);
            assertThat(a.minFailedTarget()).isEqualTo(10_240L);
        });
        // The first cell pays for the prediction's miss (9,728 and 9,984 pass, max fails naming 10,100, 10,240
        // fails); the others start at its answer: one launch at it, one above.
        assertThat(f.get("vllm[sched=a]").launches()).isEqualTo(4);
        assertThat(doc.scenariosOf("vllm[sched=a]"))
                .extracting(Scenario::targetLen)
                .containsExactly(9728L, 9984L, 65_536L, 10_240L);
        assertThat(f.get("vllm[sched=b]").launches()).isEqualTo(2);
        assertThat(f.get("vllm[sched=c]").launches()).isEqualTo(2);
        assertThat(f.get("vllm[sched=c]").params()).containsExactly(Map.entry("sched", "c"));
        assertThat(doc.scenariosOf("vllm[sched=b]"))
                .extracting(Scenario::targetLen)
                .containsExactly(9984L, 10_240L);
        assertThat(doc.scenariosOf("vllm[sched=b]"))
                .allSatisfy(s -> assertThat(s.params()).containsExactly(Map.entry("sched", "b")));
    }

    @Test
    void aResumedMatrixRunsOnlyTheCellsAndStepsThatWereNotFinished() throws Exception {
        Experiment e = Experiments.loader().parse(dir.resolve("cells.yaml"), """
                experiment: cells
                model: m
                context_pad: 100
                load: {output_len: 1, num_prompts: 1, warmup: 0}
                matrix: {sched: [a, b]}
                sweep: {strategy: list, targets: [1024, 2048]}
                backends:
                  - name: vllm
                    engine: vllm
                    command: vllm serve {model} --scheduler {sched} --max-model-len {max_model_len} --port {port}
                """);
        ResultDocument whole = explore(e, new MemoryDeployment(100_000, Set.of()), 1);
        // Killed during the second cell's first step: the first cell is done, the second has an interrupted step.
        ResultDocument killed = new ResultDocument(
                whole.metadata(),
                whole.config(),
                List.of(
                        whole.scenarios().get(0),
                        whole.scenarios().get(1),
                        whole.scenarios().get(2).toBuilder()
                                .outcome(Outcome.failed(FailureClass.INTERRUPTED), "interrupted", null)
                                .build()),
                Map.of("vllm[sched=a]", whole.frontier().get("vllm[sched=a]")));

        MemoryDeployment again = new MemoryDeployment(100_000, Set.of());
        ResultDocument resumed = explore(e, again, 1, killed);

        assertThat(again.launches()).containsExactly(1124L, 2148L);
        assertThat(resumed.scenarios())
                .extracting(s -> s.backend() + "@" + s.targetLen() + " " + s.params())
                .containsExactly(
                        "vllm[sched=a]@1024 {sched=a}",
                        "vllm[sched=a]@2048 {sched=a}",
                        "vllm[sched=b]@1024 {sched=b}",
                        "vllm[sched=b]@2048 {sched=b}");
        assertThat(resumed.frontier()).containsOnlyKeys("vllm[sched=a]", "vllm[sched=b]");
    }

    private Experiment experiment(String sweep, String... backends) throws Exception {
        return experimentOnPort(sweep, null, backends);
    }

    private Experiment experimentOnPort(String sweep, Integer port, String... backends) throws Exception {
        StringBuilder y = new StringBuilder("experiment: memory\nmodel: m\ncontext_pad: 100\n");
        y.append("load: {output_len: 1, num_prompts: 1, warmup: 1}\n");
        y.append("sweep:\n  ").append(sweep);
        y.append("backends:\n");
        for (String b : backends) {
            y.append("  - name: ").append(b).append("\n    engine: vllm\n");
            if (port != null) {
                y.append("    port: ").append(port).append('\n');
            }
            y.append("    command: vllm serve {model} --max-model-len {max_model_len} --port {port}\n");
        }
        return Experiments.loader().parse(dir.resolve("memory.yaml"), y.toString());
    }

    private ResultDocument explore(Experiment e, MemoryDeployment deployment, int parallel) throws Exception {
        return explore(e, deployment, parallel, emptyDocument());
    }

    private static ResultDocument emptyDocument() {
        Metadata m = new Metadata(
                "memory", "run", "", "m", "", "vllm", "", "", "", "", "", "", "", "", null, "", "", null, 1);
        return new ResultDocument(m, Map.of(), List.of(), Map.of());
    }

    private ResultDocument explore(Experiment e, MemoryDeployment deployment, int parallel, ResultDocument start)
            throws Exception {
        return explore(Plan.of(e), deployment, parallel, start);
    }

    private ResultDocument explore(Plan plan, MemoryDeployment deployment, int parallel, ResultDocument start)
            throws Exception {
        Path runDir = dir.resolve("run-" + System.nanoTime());
        List<String> heard = new ArrayList<>();
        RunListener listener = new RunListener() {
            @Override
            public void runStarted(String experiment, Path folder) {}

            @Override
            public void stepStarting(String backend, long target, int concurrency, long maxModelLen) {}

            @Override
            public void stepFinished(Scenario step, ResultDocument doc) {
                heard.add(step.backend() + "@" + step.targetLen());
            }

            @Override
            public void backendFinished(String backend, Frontier frontier, ResultDocument doc) {}

            @Override
            public void backendWaiting(String backend, String reason) {
                waits.add(backend + ": " + reason);
            }
        };
        StepLogs logs = new StepLogs() {
            @Override
            public Path dir() {
                return runDir;
            }

            @Override
            public String fresh(Point point) {
                return "logs/" + point.backend() + "_ctx_" + point.target() + "_" + System.nanoTime() + ".log";
            }
        };
        Recorder recorder = new Recorder(runDir.resolve("results.json"), start);
        ResultDocument doc =
                new Exploration(plan, b -> deployment, logs, recorder, listener, parallel, deployment).run();
        assertThat(heard)
                .as("every step was heard after it was saved")
                .hasSize(doc.scenarios().size()
                        - (int) start.scenarios().stream()
                                .filter(s -> !s.outcome().interrupted())
                                .count());
        return doc;
    }
}
