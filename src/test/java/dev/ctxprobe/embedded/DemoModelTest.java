package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class DemoModelTest {

    @Test
    void generatesOnceThenReusesTheFile(@TempDir Path dir) throws IOException {
        Path model = DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        assertThat(GgufInfo.read(model).shape("micro")).isEqualTo(ModelShape.MICRO);
        var firstWrite = Files.getLastModifiedTime(model);
        assertThat(DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32))
                .isEqualTo(model);
        assertThat(Files.getLastModifiedTime(model)).isEqualTo(firstWrite);
        try (var files = Files.list(dir)) {
            assertThat(files.map(p -> p.getFileName().toString()))
                    .as("no temp files left")
                    .containsExactlyInAnyOrder(model.getFileName().toString(), model.getFileName() + ".sha256");
        }
    }

    @Test
    void regeneratesAfterCorruption(@TempDir Path dir) throws IOException {
        Path model = DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        byte[] good = Files.readAllBytes(model);
        try (RandomAccessFile raf = new RandomAccessFile(model.toFile(), "rw")) {
            raf.seek(good.length / 2);
            raf.write(new byte[] {1, 2, 3, 4, 5, 6, 7, 8});
        }
        assertThat(Files.readAllBytes(model)).isNotEqualTo(good);
        DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        assertThat(Files.readAllBytes(model)).isEqualTo(good);
    }

    @Test
    void regeneratesWhenTruncatedOrSidecarMissing(@TempDir Path dir) throws IOException {
        Path model = DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        byte[] good = Files.readAllBytes(model);
        Files.write(model, new byte[] {'G', 'G', 'U', 'F'});
        DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        assertThat(Files.readAllBytes(model)).isEqualTo(good);
        Files.delete(dir.resolve(model.getFileName() + ".sha256"));
        DemoModel.ensure(dir, ModelShape.MICRO, GgufWriter.WeightType.F32);
        assertThat(dir.resolve(model.getFileName() + ".sha256")).exists();
    }
}
