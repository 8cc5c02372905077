package dev.ctxprobe.experiment;

import java.util.LinkedHashMap;
import java.util.List;

/**
 * The experiment file exactly as written, bound by Jackson with unknown keys refused; {@link ExperimentLoader}
 * turns it into an {@link Experiment} with defaults and checks. Boxed types tell "absent" from a value.
 */
record ExperimentFile(
        String experiment,
        String description,
        String model,
        HardwareFile hardware,
        LinkedHashMap<String, String> env,
        LinkedHashMap<String, Object> vars,
        Long contextPad,
        LoadFile load,
        SweepFile sweep,
        TimeoutsFile timeouts,
        Object launcher,
        List<BackendFile> backends,
        String modelConfig,
        Double weightsGib,
        List<String> secrets,
        List<String> passEnv,
        LimitsFile limits,
        Object check,
        LinkedHashMap<String, Object> matrix,
        List<String> secretFlags) {

    record LimitsFile(Long responseMib, Long eventKib, Long serverLogMib, Long maxCells) {}

    record HardwareFile(String name, String accelerator, String chip, Integer devices, Double memoryGib) {}

    record LoadFile(
            Integer outputLen,
            Integer numPrompts,
            Integer maxConcurrency,
            Object requestRate,
            Integer warmup,
            String verify) {}

    record SweepFile(
            String strategy,
            List<Long> targets,
            List<Long> curve,
            Boolean stopAfterFailure,
            FrontierFile frontier,
            String restart,
            Object concurrency) {}

    record FrontierFile(Long min, Long max, Double precision, Long align, Integer maxLaunches, String start) {}

    record TimeoutsFile(
            Double startupS,
            Double requestS,
            Double shutdownS,
            Double queueS,
            Double fatalGraceS,
            Double stallS,
            Double progressS) {}

    record BackendFile(
            String name,
            String engine,
            String host,
            Integer port,
            String command,
            LinkedHashMap<String, String> env,
            LinkedHashMap<String, Object> vars,
            String healthPath,
            Double startupS,
            List<Integer> tokenIds,
            String apiKeyEnv,
            Object launcher,
            String modelConfig,
            Double weightsGib,
            Boolean autoFirst,
            Object check,
            LinkedHashMap<String, Object> matrix) {}
}
