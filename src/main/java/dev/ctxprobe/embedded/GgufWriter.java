package dev.ctxprobe.embedded;

import java.io.BufferedOutputStream;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.ByteOrder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.SplittableRandom;

/**
 * Writes a GGUF v3 llama-architecture model with seeded random weights and the {@link ByteVocab}: a real model for
 * llama.cpp whose output is noise, which a context-length benchmark does not mind.
 */
public final class GgufWriter {
    static final int MAGIC = 0x46554747; // "GGUF" read as a little-endian uint32
    static final int VERSION = 3;
    static final int ALIGNMENT = 32;

    // gguf_type values of the metadata.
    static final int T_UINT32 = 4;
    static final int T_INT32 = 5;
    static final int T_FLOAT32 = 6;
    static final int T_BOOL = 7;
    static final int T_STRING = 8;
    static final int T_ARRAY = 9;

    /** Element type of the weight matrices; norms are always f32. */
    public enum WeightType {
        F32(0, 4),
        F16(1, 2);

        final int ggmlType;
        final int bytes;

        WeightType(int ggmlType, int bytes) {
            this.ggmlType = ggmlType;
            this.bytes = bytes;
        }
    }

    /** One tensor: sizes innermost dimension first, as GGUF lists them. */
    record Tensor(String name, long[] dims, boolean norm) {
        long elements() {
            long n = 1;
            for (long d : dims) {
                n *= d;
            }
            return n;
        }
    }

    private GgufWriter() {}

    /** Writes the model to {@code out} (not atomically: {@link DemoModel} adds that). */
    public static void write(ModelShape shape, WeightType type, long seed, Path out) throws IOException {
        try (OutputStream os = new BufferedOutputStream(Files.newOutputStream(out), 1 << 16)) {
            write(shape, type, seed, os);
        }
    }

    static void write(ModelShape shape, WeightType type, long seed, OutputStream os) throws IOException {
        List<Tensor> tensors = tensors(shape);
        Le head = new Le();
        head.u32(MAGIC).u32(VERSION).u64(tensors.size());
        Le kv = new Le();
        int kvCount = metadata(shape, kv);
        head.u64(kvCount);
        head.bytes(kv.toByteArray());
        long offset = 0;
        List<Long> offsets = new ArrayList<>();
        for (Tensor t : tensors) {
            head.str(t.name).u32(t.dims.length);
            for (long d : t.dims) {
                head.u64(d);
            }
            head.u32(t.norm ? WeightType.F32.ggmlType : type.ggmlType).u64(offset);
            offsets.add(offset);
            offset = align(offset + t.elements() * (t.norm ? 4 : type.bytes));
        }
        head.pad();
        os.write(head.toByteArray());
        SplittableRandom random = new SplittableRandom(seed);
        long written = 0;
        for (int i = 0; i < tensors.size(); i++) {
            Tensor t = tensors.get(i);
            os.write(new byte[Math.toIntExact(offsets.get(i) - written)]);
            written = offsets.get(i);
            written += writeData(t, t.norm ? WeightType.F32 : type, random, os);
        }
        os.write(new byte[Math.toIntExact(offset - written)]);
    }

    static List<Tensor> tensors(ModelShape s) {
        long e = s.embeddingLength();
        long kvw = s.kvWidth();
        long ff = s.feedForwardLength();
        long vocab = s.vocabSize();
        List<Tensor> list = new ArrayList<>();
        list.add(new Tensor("token_embd.weight", new long[] {e, vocab}, false));
        list.add(new Tensor("output_norm.weight", new long[] {e}, true));
        list.add(new Tensor("output.weight", new long[] {e, vocab}, false));
        for (int b = 0; b < s.blockCount(); b++) {
            String p = "blk." + b + ".";
            list.add(new Tensor(p + "attn_norm.weight", new long[] {e}, true));
            list.add(new Tensor(p + "attn_q.weight", new long[] {e, e}, false));
            list.add(new Tensor(p + "attn_k.weight", new long[] {e, kvw}, false));
            list.add(new Tensor(p + "attn_v.weight", new long[] {e, kvw}, false));
            list.add(new Tensor(p + "attn_output.weight", new long[] {e, e}, false));
            list.add(new Tensor(p + "ffn_norm.weight", new long[] {e}, true));
            list.add(new Tensor(p + "ffn_gate.weight", new long[] {e, ff}, false));
            list.add(new Tensor(p + "ffn_up.weight", new long[] {e, ff}, false));
            list.add(new Tensor(p + "ffn_down.weight", new long[] {ff, e}, false));
        }
        return list;
    }

    private static int metadata(ModelShape s, Le kv) {
        int n = 0;
        kv.str("general.architecture").u32(T_STRING).str("llama");
        n++;
        kv.str("general.name").u32(T_STRING).str("ctxprobe-" + s.name());
        n++;
        kv.str("general.alignment").u32(T_UINT32).u32(ALIGNMENT);
        n++;
        kv.str("llama.context_length").u32(T_UINT32).u32(Math.toIntExact(s.contextLength()));
        n++;
        kv.str("llama.embedding_length").u32(T_UINT32).u32(s.embeddingLength());
        n++;
        kv.str("llama.block_count").u32(T_UINT32).u32(s.blockCount());
        n++;
        kv.str("llama.feed_forward_length").u32(T_UINT32).u32(s.feedForwardLength());
        n++;
        kv.str("llama.attention.head_count").u32(T_UINT32).u32(s.headCount());
        n++;
        kv.str("llama.attention.head_count_kv").u32(T_UINT32).u32(s.headCountKv());
        n++;
        kv.str("llama.attention.layer_norm_rms_epsilon").u32(T_FLOAT32).f32(1e-5f);
        n++;
        kv.str("llama.rope.dimension_count").u32(T_UINT32).u32(s.headDim());
        n++;
        kv.str("tokenizer.ggml.model").u32(T_STRING).str("llama");
        n++;
        kv.str("tokenizer.ggml.tokens").u32(T_ARRAY).u32(T_STRING).u64(s.vocabSize());
        for (int i = 0; i < s.vocabSize(); i++) {
            kv.str(ByteVocab.token(i));
        }
        n++;
        kv.str("tokenizer.ggml.scores").u32(T_ARRAY).u32(T_FLOAT32).u64(s.vocabSize());
        for (int i = 0; i < s.vocabSize(); i++) {
            kv.f32(0f);
        }
        n++;
        // Without token types llama.cpp treats byte tokens as normal text and decodes them as "<0x68>".
        kv.str("tokenizer.ggml.token_type").u32(T_ARRAY).u32(T_INT32).u64(s.vocabSize());
        for (int i = 0; i < s.vocabSize(); i++) {
            kv.u32(ByteVocab.type(i));
        }
        n++;
        kv.str("tokenizer.ggml.bos_token_id").u32(T_UINT32).u32(ByteVocab.BOS);
        n++;
        kv.str("tokenizer.ggml.eos_token_id").u32(T_UINT32).u32(ByteVocab.EOS);
        n++;
        kv.str("tokenizer.ggml.unknown_token_id").u32(T_UINT32).u32(ByteVocab.UNK);
        n++;
        // So that "a b" tokenizes to exactly its bytes, with no space invented in front.
        kv.str("tokenizer.ggml.add_space_prefix").u32(T_BOOL).u8(0);
        n++;
        return n;
    }

    private static long writeData(Tensor t, WeightType type, SplittableRandom random, OutputStream os)
            throws IOException {
        long count = t.elements();
        // Scaled like a usual initialisation (1/sqrt(fan-in)) so activations stay finite through the layers.
        float scale = (float) (1.0 / Math.sqrt(t.dims[0]));
        ByteBuffer buf = ByteBuffer.allocate(1 << 16).order(ByteOrder.LITTLE_ENDIAN);
        for (long i = 0; i < count; i++) {
            float v = t.norm ? 1f : (float) ((random.nextDouble() * 2 - 1) * scale);
            if (buf.remaining() < 4) {
                os.write(buf.array(), 0, buf.position());
                buf.clear();
            }
            if (type == WeightType.F16) {
                buf.putShort(Float.floatToFloat16(v));
            } else {
                buf.putFloat(v);
            }
        }
        os.write(buf.array(), 0, buf.position());
        return count * type.bytes;
    }

    static long align(long n) {
        return (n + ALIGNMENT - 1) / ALIGNMENT * ALIGNMENT;
    }

    /** A little-endian byte sink for the header, which is small enough to build in memory. */
    private static final class Le extends ByteArrayOutputStream {
        Le u8(int v) {
            write(v);
            return this;
        }

        Le u32(int v) {
            for (int i = 0; i < 4; i++) {
                write(v >>> (8 * i));
            }
            return this;
        }

        Le u64(long v) {
            for (int i = 0; i < 8; i++) {
                write((int) (v >>> (8 * i)));
            }
            return this;
        }

        Le f32(float v) {
            return u32(Float.floatToIntBits(v));
        }

        Le str(String s) {
            byte[] b = s.getBytes(StandardCharsets.UTF_8);
            u64(b.length);
            write(b, 0, b.length);
            return this;
        }

        Le bytes(byte[] b) {
            write(b, 0, b.length);
            return this;
        }

        Le pad() {
            while (size() % ALIGNMENT != 0) {
                write(0);
            }
            return this;
        }
    }
}
