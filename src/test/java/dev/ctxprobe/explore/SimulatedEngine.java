package dev.ctxprobe.explore;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.HintKind;
import java.util.ArrayList;
import java.util.List;
import java.util.OptionalLong;
import java.util.function.LongPredicate;

/** A pretend engine for search tests: decides each target's fate the way a real engine would. */
interface SimulatedEngine {

    Probe run(long target);

    /** vLLM: refuses at startup when target + pad exceeds the KV capacity, naming that capacity. */
    static SimulatedEngine vllmLike(long maxModelLenCapacity, long pad) {
        return target -> target + pad > maxModelLenCapacity
                ? Probe.of(target, FailureClass.KV_INSUFFICIENT, maxModelLenCapacity, HintKind.MAX_MODEL_LEN)
                : Probe.of(target, null, null, null);
    }

    /** SGLang: starts with any length, rejects a prompt of {@code maxAllowed} tokens or more. */
    static SimulatedEngine sglangLike(long maxAllowed) {
        return target -> target >= maxAllowed
                ? Probe.of(target, FailureClass.REQUEST_REJECTED, maxAllowed, HintKind.PROMPT_LEN)
                : Probe.of(target, null, null, null);
    }

    /** An engine that fails above its capacity without saying what the capacity is. */
    static SimulatedEngine noHint(long capacity) {
        return failing(target -> target > capacity);
    }

    static SimulatedEngine failing(LongPredicate fails) {
        return target -> fails.test(target)
                ? Probe.of(target, FailureClass.OOM_STARTUP, null, null)
                : Probe.of(target, null, null, null);
    }

    /** Wraps an engine so that its n-th launch (1-based) finds the port taken. */
    static SimulatedEngine portBusyAt(int launch, SimulatedEngine engine) {
        int[] launches = {0};
        return target ->
                ++launches[0] == launch ? Probe.of(target, FailureClass.PORT_BUSY, null, null) : engine.run(target);
    }

    /**
     * Runs a strategy to its end the way the step runner does and returns the probes in order;
     * fails on a repeated target (a list that repeats one on purpose is driven by hand).
     */
    static List<Probe> drive(Strategy strategy, SimulatedEngine engine) {
        List<Probe> probes = new ArrayList<>();
        for (OptionalLong next = strategy.nextTarget(List.copyOf(probes));
                next.isPresent();
                next = strategy.nextTarget(List.copyOf(probes))) {
            long target = next.getAsLong();
            if (probes.stream().anyMatch(p -> p.target() == target)) {
                throw new AssertionError("target " + target + " probed twice: " + probes);
            }
            if (probes.size() > 100) {
                throw new AssertionError("the strategy does not stop: " + probes);
            }
            probes.add(engine.run(target));
        }
        return probes;
    }
}
