package dev.ctxprobe.explore;

import dev.ctxprobe.engine.Phase;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Restart;
import dev.ctxprobe.launch.StopReport;
import dev.ctxprobe.results.Point;
import dev.ctxprobe.results.Recorder;
import dev.ctxprobe.results.Scenario;
import java.util.Objects;

/**
 * The servers of one series: a new one per step ({@code restart: per_target}), or with {@code restart: on_failure}
 * one kept alive across steps while it serves and its context holds the target. A kept server is launched at the
 * strategy's largest target; one that refuses to start there leaves later steps a server of their own length; one
 * that timed out, broke a stream or died is replaced, since it may still be busy with the abandoned prompt.
 */
final class ServerPolicy implements AutoCloseable {
    private final Plan.BackendPlan plan;
    private boolean keep;
    /** The length a kept server is launched at instead of the strategy's largest; null for that largest. */
    private Long keptLength;

    private final long pad;
    private final StepRunner steps;
    private final Recorder recorder;
    private StepRunner.Live live;
    /** Where the kept server's latest step sits in the document: its stop is recorded there. */
    private int liveStepIndex = -1;
    /** A server at the largest target refused to start: later servers are launched at their own target. */
    private boolean largestRefused;
    /** That refusal, until it is recorded as the answer for the largest target. */
    private Scenario refusalAtLargest;

    /**
     * @param plan the backend, its profile, and its strategy, whose largest target a kept server is launched at
     * @param experiment its {@code restart} (keep one server with {@code on_failure}) and its {@code context_pad}
     *     (a kept server serves a target while its max_model_len holds target + pad)
     */
    ServerPolicy(Plan.BackendPlan plan, Experiment experiment, StepRunner steps, Recorder recorder) {
        this.plan = plan;
        this.keep = experiment.sweep().restart() == Restart.ON_FAILURE;
        this.pad = experiment.contextPad();
        this.steps = steps;
        this.recorder = recorder;
    }

    /** Runs the step at {@code point} on a server this policy launches or keeps. */
    Scenario step(Point point) throws InterruptedException {
        if (!keep) {
            return steps.run(plan.backend(), plan.profile(), point);
        }
        long target = point.target();
        if (refusalAtLargest != null && target == refusalAtLargest.targetLen()) {
            // That server was launched and refused already: the same command would only refuse again.
            return refusalAtLargest;
        }
        if (live != null && (!live.handle().isAlive() || live.command().maxModelLen() < target + pad)) {
            close();
        }
        if (live == null) {
            Scenario failed = launchKept(point);
            if (failed != null) {
                return failed;
            }
        }
        StepRunner.Live current = live;
        Scenario s;
        try {
            s = steps.measure(plan.backend(), plan.profile(), current, point);
        } catch (InterruptedException e) {
            live = null;
            throw new StepRunner.StepInterrupted(steps.interrupted(current, point, Phase.MEASURE), e);
        }
        if (!current.handle().isAlive() || s.outcome().replacesKeptServer()) {
            // A server that hung or broke a stream may still be busy with the abandoned prompt.
            s = steps.stop(s, current);
            live = null;
        }
        return s;
    }

    // Launches the server to keep, at the largest target unless that refused; the failed step when none started.
    private Scenario launchKept(Point point) throws StepRunner.StepInterrupted {
        long target = point.target();
        long launchAt = largestRefused
                ? target
                : Math.max(
                        target,
                        keptLength != null ? keptLength : plan.strategy().largestTarget());
        StepRunner.Launch l;
        try {
            l = steps.launch(plan.backend(), plan.profile(), point.at(launchAt), null);
        } catch (StepRunner.StepInterrupted e) {
            // The step interrupted is the probed target's, whatever length its server was launching at.
            throw new StepRunner.StepInterrupted(
                    e.scenario().toBuilder().target(target).build(), e);
        }
        if (l.failed() != null && launchAt != target) {
            if (!l.failed().outcome().worthRetryBelow()) {
                // A timeout, a busy port, a crash: the same would happen at this target; it is its answer.
                return l.failed().toBuilder().target(target).build();
            }
            // A server at the largest target would not start for its length: this and later targets get servers of
            // their own length, and the refusal is the answer for the largest when the search asks for it.
            largestRefused = true;
            refusalAtLargest = l.failed();
            l = steps.launch(plan.backend(), plan.profile(), point, null);
        }
        if (l.failed() != null) {
            return l.failed();
        }
        live = l.live();
        return null;
    }

    /**
     * From now on, keep one server launched for {@code length} (the single-prompt frontier) while it serves: it
     * serves every shorter target at every concurrency (docs/search.md#the-capacity-map). A server already kept
     * whose context holds the length goes on serving.
     */
    void keepFrom(long length) {
        keep = true;
        keptLength = length;
        largestRefused = false;
    }

    /** A step went into the document at {@code index}. */
    void recorded(Scenario s, int index) {
        if (live != null
                && s.server() != null
                && Objects.equals(live.facts().id(), s.server().id())) {
            liveStepIndex = index;
        }
        if (s == refusalAtLargest) {
            refusalAtLargest = null;
        }
    }

    /** A refused launch at the largest target that no step recorded still cost a launch. */
    int unrecordedLaunches() {
        return refusalAtLargest != null
                        && refusalAtLargest.server() != null
                        && refusalAtLargest.server().id() != null
                ? 1
                : 0;
    }

    /** Stops a kept server and records what its stop showed on the last step it answered. */
    @Override
    public void close() {
        if (live == null) {
            return;
        }
        StepRunner.Live closing = live;
        live = null;
        StopReport report = steps.stopKept(plan.backend().name(), closing);
        if (liveStepIndex >= 0) {
            int index = liveStepIndex;
            liveStepIndex = -1;
            recorder.update(d ->
                    d.withScenarioAt(index, StepRecords.stopped(d.scenarios().get(index), report)));
        }
    }
}
