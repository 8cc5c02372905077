package dev.ctxprobe.launch.slurm;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.launch.Termination;
import dev.ctxprobe.results.Ended.Reason;
import dev.ctxprobe.results.FailureClass;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import org.junit.jupiter.api.Test;

/** How each state Slurm 22.05 really reported (the recorded fixtures) becomes a {@link Termination}. */
class JobInfoTest {

    @Test
    void aRunningJobIsPlacedOnItsBatchHostAndNotEnded() throws IOException {
        JobInfo running = fixture("scontrol-d-step-running.txt");
        assertThat(running.state()).isEqualTo("RUNNING");
        assertThat(running.batchHost()).isEqualTo("localhost");
        assertThat(running.ended()).isFalse();
        assertThat(running.waiting()).isFalse();
    }

    @Test
    void aPendingJobWaitsWithItsReasonAndHasNoHost() throws IOException {
        JobInfo down = fixture("scontrol-pending-partition-down.txt");
        assertThat(down.waiting()).isTrue();
        assertThat(down.reason()).isEqualTo("PartitionDown");
        assertThat(down.batchHost()).isNull();
        assertThat(fixture("scontrol-pending-resources.txt").reason()).isEqualTo("Resources");
    }

    @Test
    void anOutOfMemoryKillInsideTheStepIsReadFromTheDerivedExitCode() throws IOException {
        Termination t = fixture("scontrol-d-step-oom.txt").termination(false);
        assertThat(t.reason()).isEqualTo(Reason.OUT_OF_MEMORY);
        assertThat(t.signal()).isEqualTo(9);
        assertThat(t.detail()).contains("FAILED (NonZeroExitCode)").contains("DerivedExitCode 0:125");
        // The batch step itself over its memory: the job's own state says so.
        assertThat(fixture("scontrol-oom.txt").termination(false).reason()).isEqualTo(Reason.OUT_OF_MEMORY);
    }

    @Test
    void aTaskKilledByASignalOrExitingWithACodeExitedByItself() throws IOException {
        assertThat(fixture("scontrol-d-step-signal.txt").termination(false))
                .extracting(Termination::reason, Termination::signal, Termination::exitCode)
                .containsExactly(Reason.EXITED, 11, null);
        assertThat(fixture("scontrol-d-step-exit3.txt").termination(false))
                .extracting(Termination::reason, Termination::exitCode)
                .containsExactly(Reason.EXITED, 3);
        assertThat(fixture("scontrol-completed.txt").termination(false).exitCode())
                .isZero();
    }

    @Test
    void aCrashedTaskEndsTheJobWithItsSignalAndACompletingJobAlreadyTellsIt() throws IOException {
        assertThat(fixture("scontrol-d-step-crash.txt").termination(false))
                .extracting(Termination::reason, Termination::signal)
                .containsExactly(Reason.EXITED, 9);
        // As seen by hand while such a job completed (see the fixtures' README).
        JobInfo completing = JobInfo.parse("JobId=8 JobName=x JobState=COMPLETING Reason=NonZeroExitCode"
                + " ExitCode=137:0 DerivedExitCode=0:9 NodeList=localhost BatchHost=localhost Power= ");
        assertThat(completing.ended()).isFalse();
        assertThat(completing.termination(false))
                .extracting(Termination::reason, Termination::signal)
                .containsExactly(Reason.EXITED, 9);
        JobInfo timingOut = JobInfo.parse("JobId=9 JobName=x JobState=COMPLETING Reason=TimeLimit ExitCode=0:15"
                + " DerivedExitCode=0:0 NodeList=localhost BatchHost=localhost Power= ");
        assertThat(timingOut.termination(false).reason()).isEqualTo(Reason.TIME_LIMIT);
    }

    @Test
    void aCancelIsAStopWhenCtxprobeAskedForItAndSomeoneElsesOtherwise() throws IOException {
        JobInfo cancelled = fixture("scontrol-d-step-cancelled.txt");
        assertThat(cancelled.termination(true))
                .extracting(Termination::reason, Termination::signal)
                .containsExactly(Reason.STOPPED, 15);
        assertThat(cancelled.termination(false).reason()).isEqualTo(Reason.CANCELLED);
    }

    @Test
    void aTimeLimitIsTheClustersEndWithTheLimitInTheDetail() throws IOException {
        Termination t = fixture("scontrol-timeout.txt").termination(true);
        assertThat(t.reason()).isEqualTo(Reason.TIME_LIMIT);
        assertThat(t.detail()).contains("TIMEOUT (TimeLimit)").contains("TimeLimit 00:01:00");
    }

    @Test
    void nodeFailuresAndPreemptionsAreTheirOwnReasons() {
        assertThat(line("NODE_FAIL", "NodeDown").termination(true).reason()).isEqualTo(Reason.NODE_FAILURE);
        assertThat(line("BOOT_FAIL", "None").termination(false).reason()).isEqualTo(Reason.NODE_FAILURE);
        assertThat(line("PREEMPTED", "None").termination(false).reason()).isEqualTo(Reason.PREEMPTED);
        assertThat(line("DEADLINE", "None").termination(false).reason()).isEqualTo(Reason.TIME_LIMIT);
    }

    @Test
    void aLineWithoutAJobIsRefused() {
        assertThatThrownBy(() -> JobInfo.parse("slurm_load_jobs error: Invalid job id specified"))
                .isInstanceOf(IllegalArgumentException.class);
    }

    // States the single-node cluster cannot produce, written in the recorded line's shape.
    private static JobInfo line(String state, String reason) {
        return JobInfo.parse("JobId=7 JobName=x JobState=" + state + " Reason=" + reason
                + " ExitCode=0:9 DerivedExitCode=0:0 NodeList=gpu01 BatchHost=gpu01 Power= ");
    }

    private static JobInfo fixture(String name) throws IOException {
        try (InputStream in = JobInfoTest.class.getResourceAsStream("/dev/ctxprobe/launch/slurm/" + name)) {
            assertThat(in).as(name).isNotNull();
            return JobInfo.parse(new String(in.readAllBytes(), StandardCharsets.UTF_8));
        }
    }

    /** Issue 32: a waiting job that cannot start by itself is a verdict; one that waits for resources is not. */
    @Test
    void aJobThatCannotStartByItselfIsNamed() {
        assertThat(JobInfo.parse("JobId=3 JobName=x JobState=PENDING Reason=JobHeldUser Dependency=(null)")
                        .neverStarts())
                .isEqualTo(FailureClass.CLUSTER_ENDED);
        assertThat(JobInfo.parse("JobId=3 JobName=x JobState=PENDING Reason=launch_failed_requeued_held")
                        .neverStarts())
                .isEqualTo(FailureClass.CLUSTER_ENDED);
        assertThat(JobInfo.parse("JobId=3 JobName=x JobState=PENDING Reason=DependencyNeverSatisfied")
                        .neverStarts())
                .isEqualTo(FailureClass.CLUSTER_ENDED);
        assertThat(JobInfo.parse("JobId=3 JobName=x JobState=PENDING Reason=InvalidQOS")
                        .neverStarts())
                .isEqualTo(FailureClass.SUBMIT_REJECTED);
        for (String reason :
                List.of("Resources", "Priority", "PartitionDown", "ReqNodeNotAvail,_UnavailableNodes:n1")) {
            assertThat(JobInfo.parse("JobId=3 JobName=x JobState=PENDING Reason=" + reason)
                            .neverStarts())
                    .as(reason)
                    .isNull();
        }
        assertThat(JobInfo.parse("JobId=3 JobName=x JobState=RUNNING Reason=None")
                        .neverStarts())
                .isNull();
    }
}
