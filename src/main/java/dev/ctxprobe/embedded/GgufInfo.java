package dev.ctxprobe.embedded;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;

/**
 * What ctxprobe needs from a GGUF file's header: its scalar metadata and where its tensor data ends, enough to know the
 * model's KV cost per token and to tell a complete file from a truncated one.
 */
public record GgufInfo(int version, long tensorCount, Map<String, Object> metadata, long expectedSize) {

    /** Thrown when a file is not a readable GGUF v2/v3 model. */
    public static final class InvalidGgufException extends IOException {
        private static final long serialVersionUID = 1L;

        InvalidGgufException(Path file, String why) {
            super(file + " is not a usable GGUF model: " + why);
        }
    }

    private static final int[] TYPE_SIZES = {1, 1, 2, 2, 4, 4, 4, 1, -1, -1, 8, 8, 8};

    /** Reads the header of {@code file}; fails when it is not GGUF or its tensors run past the end of the file. */
    public static GgufInfo read(Path file) throws IOException {
        long fileSize = Files.size(file);
        try (InputStream in = new BufferedInputStream(Files.newInputStream(file), 1 << 16)) {
            Reader r = new Reader(in);
            if (r.u32() != GgufWriter.MAGIC) {
                throw new InvalidGgufException(file, "no GGUF magic");
            }
            int version = r.u32();
            if (version != 2 && version != 3) {
                throw new InvalidGgufException(file, "GGUF version " + version + " (2 or 3 supported)");
            }
            long tensorCount = r.u64();
            long kvCount = r.u64();
            if (tensorCount < 0 || kvCount < 0 || tensorCount > 1_000_000 || kvCount > 1_000_000) {
                throw new InvalidGgufException(file, "implausible counts " + tensorCount + "/" + kvCount);
            }
            Map<String, Object> meta = new HashMap<>();
            for (long i = 0; i < kvCount; i++) {
                String key = r.str();
                int type = r.u32();
                Object value = r.value(type);
                if (value != null) {
                    meta.put(key, value);
                }
            }
            long alignment = meta.get("general.alignment") instanceof Number n ? n.longValue() : GgufWriter.ALIGNMENT;
            long dataEnd = 0;
            for (long i = 0; i < tensorCount; i++) {
                r.str();
                int dims = r.u32();
                long elements = 1;
                for (int d = 0; d < dims; d++) {
                    elements *= r.u64();
                }
                int ggmlType = r.u32();
                long offset = r.u64();
                // Only f32 and f16 are sized here; for other types the size check covers the header alone.
                long bytes = ggmlType == 0 ? elements * 4 : ggmlType == 1 ? elements * 2 : 0;
                dataEnd = Math.max(dataEnd, offset + bytes);
            }
            long dataStart = (r.position + alignment - 1) / alignment * alignment;
            long expected = dataStart + dataEnd;
            if (fileSize < expected) {
                throw new InvalidGgufException(file, "truncated: " + fileSize + " bytes, tensors need " + expected);
            }
            return new GgufInfo(version, tensorCount, Map.copyOf(meta), expected);
        } catch (EOFException e) {
            throw new InvalidGgufException(file, "header ends early");
        }
    }

    /** The model's shape from {@code <arch>.*} metadata (attention key length when present, else width/heads). */
    public ModelShape shape(String name) {
        String arch = String.valueOf(metadata.get("general.architecture"));
        int heads = intOf(arch + ".attention.head_count", 1);
        int width = intOf(arch + ".embedding_length", 0);
        int kvHeads = intOf(arch + ".attention.head_count_kv", heads);
        int keyLength = intOf(arch + ".attention.key_length", width / heads);
        // Width is only used through headDim * kvHeads, so express a model with an explicit key length that way.
        int effectiveWidth = keyLength * heads;
        Object tokens = metadata.get("tokenizer.ggml.tokens");
        return new ModelShape(
                name,
                intOf(arch + ".block_count", 0),
                effectiveWidth,
                heads,
                kvHeads,
                intOf(arch + ".feed_forward_length", 1),
                metadata.get(arch + ".context_length") instanceof Number n ? n.longValue() : 0,
                tokens instanceof Long count ? Math.toIntExact(count) : 0);
    }

    private int intOf(String key, int fallback) {
        return metadata.get(key) instanceof Number n ? n.intValue() : fallback;
    }

    private static final class Reader {
        private final DataInputStream in;
        long position;

        Reader(InputStream in) {
            this.in = new DataInputStream(in);
        }

        int u32() throws IOException {
            position += 4;
            return Integer.reverseBytes(in.readInt());
        }

        long u64() throws IOException {
            position += 8;
            return Long.reverseBytes(in.readLong());
        }

        String str() throws IOException {
            long len = u64();
            if (len < 0 || len > 1 << 20) {
                throw new EOFException("string length " + len);
            }
            byte[] b = in.readNBytes((int) len);
            if (b.length != len) {
                throw new EOFException();
            }
            position += len;
            return new String(b, StandardCharsets.UTF_8);
        }

        void skip(long n) throws IOException {
            in.skipNBytes(n);
            position += n;
        }

        /** Scalars as values; arrays are skipped and stand for their element count (a Long). */
        Object value(int type) throws IOException {
            switch (type) {
                case GgufWriter.T_STRING:
                    return str();
                case GgufWriter.T_ARRAY: {
                    int elem = u32();
                    long count = u64();
                    for (long i = 0; i < count; i++) {
                        if (elem == GgufWriter.T_STRING || elem == GgufWriter.T_ARRAY) {
                            value(elem);
                        } else {
                            skip(size(elem));
                        }
                    }
                    return count;
                }
                case 0, 1:
                    position++;
                    return (long) in.readUnsignedByte();
                case GgufWriter.T_BOOL:
                    position++;
                    return in.readUnsignedByte() != 0;
                case 2, 3:
                    position += 2;
                    return (long) Short.reverseBytes(in.readShort());
                case GgufWriter.T_UINT32:
                    return Integer.toUnsignedLong(u32());
                case GgufWriter.T_INT32:
                    return (long) u32();
                case GgufWriter.T_FLOAT32:
                    return (double) Float.intBitsToFloat(u32());
                case 10, 11:
                    return u64();
                case 12:
                    return Double.longBitsToDouble(u64());
                default:
                    throw new EOFException("unknown metadata type " + type);
            }
        }

        private static long size(int type) throws EOFException {
            if (type < 0 || type >= TYPE_SIZES.length || TYPE_SIZES[type] < 0) {
                throw new EOFException("unknown array element type " + type);
            }
            return TYPE_SIZES[type];
        }
    }
}
