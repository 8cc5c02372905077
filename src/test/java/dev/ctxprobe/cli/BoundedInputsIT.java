package dev.ctxprobe.cli;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * Issue 30, failure 6: a 200 MB experiment file took 1.5 GB before it was refused, and {@code report} of a 500 MB
 * results file 3.56 GB and 170 s. Both are refused by their size before they are read (the sizes and the memory
 * this takes are measured in docs/experiment-file.md#how-large-a-file-may-be and docs/results.md#how-large-a-results-file-may-be; this test asserts the
 * refusal and its sentence, not times). The files are sparse: made at once, they take no disk.
 */
class BoundedInputsIT {
    private static final long MB = 1_000_000;

    @TempDir
    Path dir;

    private static Path sparse(Path file, String head, long size) throws Exception {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.write(head.getBytes(StandardCharsets.UTF_8));
            f.setLength(size);
        }
        return file;
    }

    private String ctxprobe(int expectedExit, String... args) throws Exception {
        Path log = dir.resolve("console.txt");
        Process p = FaultRuns.startCtxprobe(log, Map.of(), List.of(), args);
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        String out = Files.readString(log);
        assertThat(p.exitValue()).as(out).isEqualTo(expectedExit);
        return out;
    }

    @Test
    void a200MbExperimentFileIsRefusedByItsSize() throws Exception {
        Path exp = sparse(dir.resolve("huge.yaml"), "experiment: huge\ndescription: '", 200 * MB);
        for (String command : List.of("validate", "run", "plan")) {
            String out = command.equals("run")
                    ? ctxprobe(
                            2,
                            command,
                            exp.toString(),
                            "--out",
                            dir.resolve("out").toString())
                    : ctxprobe(2, command, exp.toString());
            assertThat(out)
                    .as(command)
                    .contains(exp + ": the file is 200,000,000 bytes; an experiment file is at most 4 MiB")
                    .doesNotContain("Exception");
        }
        assertThat(dir.resolve("out")).doesNotExist();
    }

    @Test
    void a500MbResultsFileIsRefusedByItsSize() throws Exception {
        Path results = sparse(dir.resolve("results.json"), "{\"metadata\": {}, \"scenarios\": [\"", 500 * MB);
        String out = ctxprobe(2, "report", results.toString());
        assertThat(out)
                .contains("500,000,000 bytes: a results file is at most 64 MiB")
                .doesNotContain("Exception");
    }
}
