package dev.ctxprobe.experiment;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowableOfType;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Set;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** Issue 30, failure 6: an experiment file is bounded by its size, and one value by the parser's own limit. */
class BoundedExperimentTest {
    private final ExperimentLoader loader = new ExperimentLoader(Set.of("vllm"), ExperimentLoader.LOCAL_ONLY);

    @TempDir
    Path dir;

    @Test
    void aFileOverTheLimitIsRefusedByItsSize() throws Exception {
        Path file = dir.resolve("huge.yaml");
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.write("experiment: x\ndescription: '".getBytes());
            f.setLength(ExperimentLoader.MAX_FILE_BYTES + 1);
        }
        ExperimentError e = catchThrowableOfType(ExperimentError.class, () -> loader.load(file));
        assertThat(e.getMessage())
                .startsWith(file.toString())
                .contains("4,194,305 bytes")
                .contains("at most 4 MiB");
    }

    @Test
    void oneValueOverTheLimitIsRefusedByTheParserWithItsPosition() throws Exception {
        Path file = dir.resolve("long.yaml");
        // Over lines, as a block: one line that long is refused before parsing (below).
        String block = ("  " + "d".repeat(1023) + "\n").repeat(ExperimentLoader.MAX_STRING_CHARS / 1024 + 1);
        Files.writeString(file, "experiment: x\nmodel: /m\ndescription: |\n" + block);
        ExperimentError e = catchThrowableOfType(ExperimentError.class, () -> loader.load(file));
        assertThat(e.getMessage())
                .contains("longer than 1,048,576 characters")
                .doesNotContain("StreamReadConstraints")
                .doesNotContain("Exception");
        assertThat(e.line()).as(e.getMessage()).isEqualTo(3);
        assertThat(e.column()).as(e.getMessage()).isPositive();
    }

    @Test
    void oneLineOverTheLimitIsRefusedBeforeParsing() throws Exception {
        Path file = dir.resolve("line.yaml");
        Files.writeString(
                file, "experiment: x\nmodel: /m\ndescription: '" + "d".repeat(ExperimentLoader.MAX_LINE_CHARS) + "'\n");
        ExperimentError e = catchThrowableOfType(ExperimentError.class, () -> loader.load(file));
        assertThat(e.getMessage())
                .contains("this line is 65,551 characters long")
                .contains("at most 65,536");
        assertThat(e.line()).isEqualTo(3);
        assertThat(e.column()).isEqualTo(ExperimentLoader.MAX_LINE_CHARS + 1);
    }
}
