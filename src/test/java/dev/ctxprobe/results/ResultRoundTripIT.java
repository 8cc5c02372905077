package dev.ctxprobe.results;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.explore.RunListener;
import dev.ctxprobe.run.Experiments;
import dev.ctxprobe.run.Run;
import dev.ctxprobe.testsupport.SampleRun;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.json.JsonMapper;

/** What a real run writes, the reader reads back as it was, and writing that again gives the same bytes. */
class ResultRoundTripIT {
    private static final RunListener SILENT = new RunListener() {
        @Override
        public void runStarted(String experiment, Path runDir) {}

        @Override
        public void stepStarting(String backend, long target, int concurrency, long maxModelLen) {}

        @Override
        public void stepFinished(Scenario step, ResultDocument doc) {}

        @Override
        public void backendFinished(String backend, Frontier frontier, ResultDocument doc) {}
    };

    @TempDir
    Path dir;

    @Test
    void aRealRunReadsBackAsWrittenAndWritesTheSameBytesAgain() throws Exception {
        Path file = SampleRun.write(dir);
        Experiment e = Experiments.load(file);
        Run.Result result = new Run(SILENT, notice -> {}).start(e, Experiments.text(file), file, dir.resolve("out"));
        assertThat(result.ending()).isEqualTo(Run.Ending.COMPLETED);
        ResultDocument written = result.document();
        Path results = result.dir().resolve(ResultFiles.NAME);

        ResultDocument read = ResultFiles.read(results);

        assertThat(read.metadata()).isEqualTo(written.metadata());
        assertThat(read.scenarios()).isEqualTo(written.scenarios());
        assertThat(read.frontier()).isEqualTo(written.frontier());
        // Config values are untyped: 1 may be an Integer or a Long in Java and is the same number in the file.
        JsonMapper json = JsonMapper.builder().build();
        assertThat(json.valueToTree(read.config()).toString())
                .isEqualTo(json.valueToTree(written.config()).toString());
        assertThat(read.scenarios())
                .anySatisfy(s -> assertThat(s.outcome().failed()).isTrue())
                .anySatisfy(s -> assertThat(s.server().ended()).isNotNull());

        Path again = dir.resolve("again.json");
        ResultFiles.write(again, read);
        assertThat(Files.readAllBytes(again)).isEqualTo(Files.readAllBytes(results));
    }
}
