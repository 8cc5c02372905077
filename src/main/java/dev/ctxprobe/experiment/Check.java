package dev.ctxprobe.experiment;

import java.util.List;

/**
 * What the measured requests also check besides being served (docs/experiment-file.md#check): a pass key hidden in
 * each prompt, asked for at its end. An experiment or a backend without {@code check} checks nothing.
 *
 * @param depths where the keys lie in the requests asked after the measured ones of a step that served more than
 *     any before it of its backend (its frontier so far), one per depth: 0 just after the opening, 1 just before the
 *     question, each strictly between; every measured request's key lies at {@link #STEP_DEPTH}
 * @param controlLen the length of the control, asked on a backend's server after the first step that came back with
 *     no key right (once a run, and only when no key was right before): a model that misses the key there cannot do
 *     the task at all
 */
public record Check(List<Double> depths, long controlLen) {
    /** The one kind there is. */
    public static final String PASSKEY = "passkey";
    /** The middle, where models lose a key first: every measured request's key lies there. */
    public static final double STEP_DEPTH = 0.5;
    /** Near the start, the middle and near the end: a model that forgets one part of its prompt misses one. */
    public static final List<Double> DEPTHS = List.of(0.1, STEP_DEPTH, 0.9);
    /**
     * Short enough for any model and server and cheap to ask, long enough to hold the prompt's fixed pieces (about 60
     * tokens with a subword tokenizer, 170 with a byte one) with filler between the key and the question.
     */
    public static final long CONTROL_LEN = 256;
    /** Output tokens a five-digit key needs in any tokenizer, with its leading space and a margin. */
    public static final int MIN_OUTPUT_LEN = 8;

    public Check {
        depths = List.copyOf(depths);
    }

    /** {@code check: passkey}: the defaults. */
    public static Check passkey() {
        return new Check(DEPTHS, CONTROL_LEN);
    }
}
