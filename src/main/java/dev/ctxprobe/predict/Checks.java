package dev.ctxprobe.predict;

import java.util.List;

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
