package dev.ctxprobe.predict;

import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Source;
import java.util.List;
import java.util.function.Function;

/** Rules and readings more than one engine shares. */
final class Checks {
    private Checks() {}

    /** The command needs {@code needed} accelerators: a check when the machine's count is known. */
    static void devices(BackendSetup s, List<Check> checks, int needed, String how) {
        if (needed <= 1) {
            return;
        }
        Integer present = s.devices();
        if (present == null) {
            return;
        }
        boolean ok = needed <= present;
        checks.add(new Check(
                Bound.DEVICES,
                ok,
                how + " = " + needed + " devices " + (ok ? "<= " : "> ") + present + " present"
                        + (ok ? "" : ": the engine cannot start")));
    }

    /** A count flag such as the tensor-parallel size (1 when absent), recorded as an input when given. */
    static int count(Flags flags, Facts f, String... names) {
        Flags.Found found = flags.find(names);
        if (found == null || Flags.number(found.value()) == null) {
            return 1;
        }
        f.input(found.name(), found.value(), Source.FLAG, flags.where());
        return Math.max(1, Math.toIntExact(Flags.number(found.value())));
    }

    /**
     * The value flag {@code name} gives, as {@code parse} reads it ({@link Flags#number}, {@link Flags#decimal}),
     * recorded as an input; null when the command gives none that reads.
     */
    static <T> T given(Flags flags, Facts f, String name, Function<String, T> parse) {
        Flags.Found found = flags.find(name);
        T value = found == null ? null : parse.apply(found.value());
        if (value != null) {
            f.input(name, found.value(), Source.FLAG, flags.where());
        }
        return value;
    }

    /**
     * How an engine sizes its KV memory before a launch: a share of each device's memory, less each rank's part of
     * the weights.
     *
     * @param fractionName the engine's name for the share ({@code gpu_memory_utilization})
     * @param what what the memory left is for, in the engine's words
     * @param source where the engine computes it
     * @param unknown what the engine also takes at startup that is not known before a launch, recorded as an
     *     assumption with every figure
     */
    record MemoryShare(String fractionName, String what, String source, String unknown) {}

    /**
     * What is left on each device when the engine takes {@code fraction} of its memory and each of {@code ranks}
     * ranks holds its part of the weights, shown in {@code lines}; null when the memory or the weights are not known.
     */
    static Long leftBesideWeights(
            BackendSetup s, Facts f, MemoryShare share, double fraction, int ranks, List<String> lines) {
        Long memory = s.memoryPerDevice();
        Long weights = s.weightsBytes();
        if (memory == null || weights == null) {
            return null;
        }
        long available = Math.round(memory * fraction) - weights / ranks;
        lines.add("available for " + share.what() + " per device: " + Format.gib(memory) + " x "
                + Format.decimal(fraction) + " " + share.fractionName() + " - " + Format.gib(weights) + " weights / "
                + ranks + " ranks = " + Format.gib(available) + " (" + share.source() + ")");
        f.assume(share.unknown());
        return available;
    }

    /** Whether the backend's env sets the switch {@code name} (see {@link #truthy}), recorded as an input when so. */
    static boolean envSwitch(BackendSetup s, Facts f, String name) {
        if (!truthy(s.env(name))) {
            return false;
        }
        f.input(name, s.env(name), Source.FLAG, s.at() + ".env");
        return true;
    }

    /**
     * Whether {@code length} is a context a prompt can use. If not, why: the input {@code missing} when neither
     * {@code flagText} nor the model config tells it, or a failed check when {@code lengthName} is below one token.
     */
    static boolean usableContext(
            Long length, Facts f, List<Check> checks, String missing, String flagText, String lengthName) {
        if (length == null) {
            f.missing(missing, "neither " + flagText + " nor a length in the model config tells the context");
            return false;
        }
        if (length < 1) {
            checks.add(
                    new Check(Bound.CONTEXT_FLAG, false, lengthName + " " + length + " leaves no room for a prompt"));
            return false;
        }
        return true;
    }

    /**
     * The model's own bound on a length the command sets: {@code length} at most the {@code derived} one, which
     * {@code what} names; {@code refusal} says what the engine does when it is above (empty when not known).
     */
    static void modelLimit(
            List<Check> checks,
            String lengthText,
            long length,
            ModelConfig.Limit derived,
            String what,
            String refusal) {
        boolean ok = length <= derived.tokens();
        checks.add(new Check(
                Bound.MODEL_CONFIG,
                ok,
                lengthText + (ok ? " <= " : " > ") + Format.tokens(derived.tokens()) + what + " ("
                        + derived.explanation() + ")" + (ok ? "" : refusal)));
    }

    /** An environment switch set the way the engines read it ({@code 1} or {@code true}). */
    static boolean truthy(String value) {
        return value != null && (value.equals("1") || value.equalsIgnoreCase("true"));
    }

    /**
     * Bytes per element of a KV cache dtype as vLLM and SGLang name them; {@code auto} is the model's dtype; null
     * for one not sized here (fp4 and per-token-head formats).
     */
    static Integer dtypeBytes(String name, ModelConfig cfg) {
        String n = Flags.lower(name);
        if (n.equals("auto")) {
            return cfg.modelDtypeBytes();
        }
        if (n.startsWith("fp8")) {
            return n.contains("per_token") ? null : 1;
        }
        return switch (n) {
            case "bfloat16", "bf16", "float16", "fp16", "half" -> 2;
            case "float", "float32", "fp32" -> 4;
            default -> null;
        };
    }
}
