package dev.ctxprobe.embedded;

import java.util.Locale;

/**
 * The 260-token vocabulary of the demo models: {@code <unk>}, {@code <s>}, {@code </s>}, the 256 byte tokens and
 * {@code ▁}, so that any text tokenizes (one token per byte) and ids {@value #FIRST_BYTE}..258 are safe fillers.
 */
public final class ByteVocab {
    public static final int SIZE = 260;
    public static final int UNK = 0;
    public static final int BOS = 1;
    public static final int EOS = 2;
    public static final int FIRST_BYTE = 3;
    public static final int SPACE = 259;

    // llama.cpp's token types (llama_token_type): a BYTE token decodes to its byte, CONTROL ones to nothing.
    static final int TYPE_NORMAL = 1;
    static final int TYPE_UNKNOWN = 2;
    static final int TYPE_CONTROL = 3;
    static final int TYPE_BYTE = 6;

    private ByteVocab() {}

    /** The token's text as stored in {@code tokenizer.ggml.tokens}. */
    static String token(int id) {
        return switch (id) {
            case UNK -> "<unk>";
            case BOS -> "<s>";
            case EOS -> "</s>";
            case SPACE -> "\u2581";
            default -> String.format(Locale.ROOT, "<0x%02X>", id - FIRST_BYTE);
        };
    }

    static int type(int id) {
        return switch (id) {
            case UNK -> TYPE_UNKNOWN;
            case BOS, EOS -> TYPE_CONTROL;
            case SPACE -> TYPE_NORMAL;
            default -> TYPE_BYTE;
        };
    }

    /** The id of the token for this byte value (0..255). */
    public static int byteToken(int b) {
        return FIRST_BYTE + (b & 0xFF);
    }
}
