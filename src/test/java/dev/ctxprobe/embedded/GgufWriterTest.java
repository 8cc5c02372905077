package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Arrays;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class GgufWriterTest {

    private static byte[] bytes(ModelShape shape, GgufWriter.WeightType type, long seed) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        GgufWriter.write(shape, type, seed, out);
        return out.toByteArray();
    }

    @Test
    void headerIsGgufV3WithTensorAndKvCounts() throws IOException {
        ByteBuffer b = ByteBuffer.wrap(bytes(ModelShape.MICRO, GgufWriter.WeightType.F32, 1))
                .order(ByteOrder.LITTLE_ENDIAN);
        byte[] magic = new byte[4];
        b.get(magic);
        assertThat(new String(magic, StandardCharsets.US_ASCII)).isEqualTo("GGUF");
        assertThat(b.getInt()).isEqualTo(3);
        assertThat(b.getLong()).as("tensors: embd, norm, output + 9 per block").isEqualTo(12);
        assertThat(b.getLong()).as("metadata keys").isEqualTo(19);
        long keyLength = b.getLong();
        byte[] key = new byte[(int) keyLength];
        b.get(key);
        assertThat(new String(key, StandardCharsets.UTF_8)).isEqualTo("general.architecture");
    }

    @Test
    void sizeIsAlignedHeaderPlusAlignedTensorData(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("m.gguf");
        GgufWriter.write(ModelShape.MICRO, GgufWriter.WeightType.F32, 1, file);
        GgufInfo info = GgufInfo.read(file);
        long size = Files.size(file);
        assertThat(size % GgufWriter.ALIGNMENT).isZero();
        assertThat(info.expectedSize()).isEqualTo(size);
        long data = 0;
        for (GgufWriter.Tensor t : GgufWriter.tensors(ModelShape.MICRO)) {
            data += GgufWriter.align(t.elements() * 4);
        }
        long headerEnd = size - data;
        assertThat(headerEnd % GgufWriter.ALIGNMENT)
                .as("tensor data starts aligned")
                .isZero();
        assertThat(headerEnd).isPositive();
    }

    @Test
    void readerRecoversTheShape(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("mini.gguf");
        GgufWriter.write(ModelShape.MINI, GgufWriter.WeightType.F16, 7, file);
        GgufInfo info = GgufInfo.read(file);
        assertThat(info.version()).isEqualTo(3);
        assertThat(info.metadata())
                .containsEntry("general.architecture", "llama")
                .containsEntry("tokenizer.ggml.model", "llama")
                .containsEntry("tokenizer.ggml.add_space_prefix", false)
                .containsEntry("tokenizer.ggml.token_type", 260L);
        assertThat(info.shape("mini")).isEqualTo(ModelShape.MINI);
    }

    @Test
    void f16HalvesTheMatricesButKeepsNormsF32() throws IOException {
        int f32 = bytes(ModelShape.MINI, GgufWriter.WeightType.F32, 1).length;
        int f16 = bytes(ModelShape.MINI, GgufWriter.WeightType.F16, 1).length;
        assertThat(f16).isLessThan(f32).isGreaterThan(f32 / 2);
    }

    @Test
    void sameSeedSameBytesOtherSeedOtherWeights() throws IOException {
        byte[] a = bytes(ModelShape.MICRO, GgufWriter.WeightType.F32, 1);
        assertThat(bytes(ModelShape.MICRO, GgufWriter.WeightType.F32, 1)).isEqualTo(a);
        byte[] c = bytes(ModelShape.MICRO, GgufWriter.WeightType.F32, 2);
        assertThat(c).hasSameSizeAs(a);
        assertThat(Arrays.equals(a, c)).isFalse();
    }

    @Test
    void vocabularyHasByteTokensBetweenSpecialsAndSpace() {
        assertThat(ByteVocab.token(0)).isEqualTo("<unk>");
        assertThat(ByteVocab.token(2)).isEqualTo("</s>");
        assertThat(ByteVocab.token(ByteVocab.byteToken('h'))).isEqualTo("<0x68>");
        assertThat(ByteVocab.token(258)).isEqualTo("<0xFF>");
        assertThat(ByteVocab.token(259)).isEqualTo("\u2581");
        assertThat(ByteVocab.type(100)).isEqualTo(ByteVocab.TYPE_BYTE);
    }

    @Test
    void truncatedOrForeignFilesAreRejected(@TempDir Path dir) throws IOException {
        Path file = dir.resolve("m.gguf");
        GgufWriter.write(ModelShape.MICRO, GgufWriter.WeightType.F32, 1, file);
        byte[] all = Files.readAllBytes(file);
        Files.write(file, Arrays.copyOf(all, all.length - 100));
        assertThatThrownBy(() -> GgufInfo.read(file))
                .isInstanceOf(GgufInfo.InvalidGgufException.class)
                .hasMessageContaining("truncated");
        Files.writeString(file, "not a model at all");
        assertThatThrownBy(() -> GgufInfo.read(file)).hasMessageContaining("no GGUF magic");
    }
}
