package dev.ctxprobe.predict;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.experiment.Defaults;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.ServerCommand;
import dev.ctxprobe.hardware.Device;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.results.Bound;
import dev.ctxprobe.results.Source;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;
import java.util.function.Supplier;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * What every engine's sizing of one backend shares: the experiment's pad, alignment and load, the command at a
 * target, and the model config, weights and accelerators, each looked up once, when a check first needs it, and
 * recorded with its source (or as missing).
 */
final class BackendSetup {
    /** The largest max_model_len engines accept, as the experiment loader checks it. */
    static final long MAX_LENGTH = Defaults.MAX_MODEL_LEN;

    /** Any target: the command is resolved here and one token above to see which flags follow the target. */
    private static final long PROBE = 1_000_000;

    private static final JsonMapper JSON = JsonMapper.builder().build();

    final Experiment experiment;
    final Backend backend;
    final EngineProfile profile;
    final PredictInputs given;
    final long pad;
    final long align;
    final int outputLen;
    private final String at;
    private final Facts base = new Facts();
    private final Map<String, Boolean> follows = new HashMap<>();

    private final Once<ModelConfig> config = new Once<>(this::findConfig);
    private final Once<Long> weights = new Once<>(this::findWeights);
    private final Once<Long> memory = new Once<>(this::findMemory);
    private final Once<Integer> devices = new Once<>(this::findDevices);

    BackendSetup(Experiment experiment, Backend backend, PredictInputs given, Sizing sizing) {
        this.experiment = experiment;
        this.backend = backend;
        this.profile = sizing.profile();
        this.given = given;
        this.pad = experiment.contextPad();
        this.at = "backends[" + Experiment.fileIndex(experiment.backends(), backend) + "]";
        this.outputLen = experiment.load().outputLen();
        Experiment.Frontier frontier = experiment.sweep().frontier();
        this.align = frontier == null ? Defaults.ALIGN : frontier.align();
        base.input(
                "context_pad",
                Format.tokens(pad),
                Source.EXPERIMENT,
                "context_pad (" + Defaults.CONTEXT_PAD + " when not written)");
        if (frontier == null) {
            base.input("align", Format.tokens(align), Source.DEFAULT, "the frontier's default, no sweep.frontier");
        } else {
            base.input("align", Format.tokens(align), Source.EXPERIMENT, "sweep.frontier.align");
        }
        if (outputLen != 1) {
            base.assume("the engines' prompt rules are written for one output token; load.output_len is " + outputLen
                    + ", so the largest prompt is up to " + (outputLen - 1) + " tokens smaller");
        }
    }

    /** The facts looked up so far (config, weights, memory), to put before an evaluation's own. */
    Facts base() {
        return base;
    }

    /** Where the backend is written: {@code backends[1]}. */
    String at() {
        return at;
    }

    /** The command's flags when the target is {@code target}. */
    Flags flagsAt(long target) {
        int port = backend.port() == null ? 0 : backend.port();
        ServerCommand command = ServerCommand.resolve(experiment, backend, target, port);
        return new Flags(command.argv(), at + ".command");
    }

    /**
     * Whether the flag's value changes with the target (a template uses {max_model_len} or {target_len} in it),
     * found by resolving the command at two targets.
     */
    boolean follows(String... names) {
        String key = String.join(" ", names);
        return follows.computeIfAbsent(key, k -> {
            Flags.Found a = flagsAt(PROBE).find(names);
            Flags.Found b = flagsAt(PROBE + 1).find(names);
            return a != null && b != null && !a.value().equals(b.value());
        });
    }

    /** How a context length read from the command relates to the target, for the lines that show it. */
    String relation(long target, long length, boolean follows) {
        if (!follows) {
            return "fixed in the command";
        }
        if (length == target + pad) {
            return "target + context_pad " + Format.tokens(pad);
        }
        return length == target ? "the target itself" : "follows the target";
    }

    /** The bound a prompt rule sets: the pad when the length follows the target, else the fixed flag. */
    static Bound promptBound(boolean follows) {
        return follows ? Bound.ENGINE_PAD : Bound.CONTEXT_FLAG;
    }

    String env(String name) {
        return backend.env().get(name);
    }

    /** The model's config.json, or null (recorded as missing) when none is given or found. */
    ModelConfig config() {
        return config.get();
    }

    private ModelConfig findConfig() {
        Path file;
        Source source;
        String where;
        if (given.modelConfig() != null) {
            file = given.modelConfig();
            source = Source.FLAG;
            where = "--model-config";
        } else if (backend.modelConfig() != null) {
            file = relativeToExperiment(backend.modelConfig());
            source = Source.EXPERIMENT;
            where = at + ".model_config";
        } else if (experiment.modelConfig() != null) {
            file = relativeToExperiment(experiment.modelConfig());
            source = Source.EXPERIMENT;
            where = "model_config";
        } else {
            Path dir = modelDir();
            file = dir == null ? null : dir.resolve("config.json");
            source = Source.FILE;
            where = "{model}/config.json";
            if (file == null || !Files.isRegularFile(file)) {
                base.missing(
                        "model config",
                        "no config.json in the model folder '" + experiment.model()
                                + "': give 'model_config: PATH' in the experiment (or --model-config)");
                return null;
            }
        }
        try {
            ModelConfig read = ModelConfig.read(file);
            base.input("model config", file.toString(), source, where);
            base.input("architecture", read.architecture(), Source.FILE, file.toString());
            return read;
        } catch (IOException e) {
            base.missing("model config", file + " (" + where + ") cannot be used: " + e.getMessage());
            return null;
        }
    }

    /** The weights in bytes, or null (recorded as missing). */
    Long weightsBytes() {
        return weights.get();
    }

    /** Memory of one accelerator in bytes, or null (recorded as missing). */
    Long memoryPerDevice() {
        return memory.get();
    }

    /**
     * The host's memory in bytes when the engine keeps its KV cache there: nothing declares accelerator memory
     * (no {@code --memory-gib}, no {@code hardware.memory_gib}) and the machine was looked at and has no
     * accelerator, or {@code cpuOnly} (the command keeps every layer on the CPU). Null otherwise.
     */
    Long hostMemoryForCpu(boolean cpuOnly) {
        Experiment.HardwareSpec declared = experiment.hardware();
        boolean memoryDeclared = given.memoryGib() != null
                || (declared != null
                        && (declared.memoryGib() != null || HardwareProbe.memoryMiBInName(declared.name()) != null));
        boolean noAccelerator =
                given.detected() != null && given.detected().devices().isEmpty();
        if (memoryDeclared || !(cpuOnly || noAccelerator) || given.hostMemory() == null) {
            return null;
        }
        long bytes = given.hostMemory().bytes();
        base.input(
                "host memory",
                Format.gib(bytes),
                Source.DETECTED,
                given.hostMemory().source()
                        + (cpuOnly ? "; the command keeps every layer on the CPU" : "; no accelerator"));
        return bytes;
    }

    /** Accelerators on the machine, or null when neither declared nor detected (not an error by itself). */
    Integer devices() {
        return devices.get();
    }

    private Long findWeights() {
        Long found = first(
                "weights",
                () -> inGib(given.weightsGib(), Source.FLAG, "--weights-gib"),
                () -> inGib(backend.weightsGib(), Source.EXPERIMENT, at + ".weights_gib"),
                () -> inGib(experiment.weightsGib(), Source.EXPERIMENT, "weights_gib"),
                this::indexedWeights);
        if (found == null) {
            base.missing(
                    "weights",
                    "no model.safetensors.index.json with metadata.total_size beside the model config: give"
                            + " 'weights_gib: N' in the experiment");
        }
        return found;
    }

    private Known<Long> indexedWeights() {
        Path index = indexFile();
        Long total = index == null ? null : totalSize(index);
        return new Known<>(
                total, total == null ? null : Format.gib(total), Source.FILE, index + " metadata.total_size");
    }

    private Long findMemory() {
        Experiment.HardwareSpec declared = experiment.hardware();
        Long found = first(
                "memory per device",
                () -> inGib(given.memoryGib(), Source.FLAG, "--memory-gib"),
                () -> inGib(declared == null ? null : declared.memoryGib(), Source.EXPERIMENT, "hardware.memory_gib"),
                this::namedMemory,
                this::detectedMemory);
        if (found == null) {
            base.missing(
                    "memory per device",
                    "neither declared in the experiment nor detected on this machine: give 'hardware:"
                            + " {memory_gib: N}'");
        }
        return found;
    }

    /** The memory a declared {@code hardware.name} states, as ctxprobe and the seeds write it ({@code 143GB}). */
    private Known<Long> namedMemory() {
        Experiment.HardwareSpec declared = experiment.hardware();
        Long mib = declared == null ? null : HardwareProbe.memoryMiBInName(declared.name());
        if (mib == null) {
            return new Known<>(null, null, Source.EXPERIMENT, null);
        }
        long bytes = mib << 20;
        String shown = Format.gib(bytes) + " (at least " + Format.tokens(mib) + " MiB: the name's GB are MiB / 1000)";
        return new Known<>(bytes, shown, Source.EXPERIMENT, "hardware.name '" + declared.name() + "'");
    }

    private Known<Long> detectedMemory() {
        Long smallest = given.detected() == null
                ? null
                : given.detected().devices().stream()
                        .map(Device::memTotalMiB)
                        .filter(Objects::nonNull)
                        .min(Long::compare)
                        .orElse(null);
        if (smallest == null) {
            return new Known<>(null, null, Source.DETECTED, null);
        }
        long bytes = smallest << 20;
        String shown = Format.gib(bytes) + " (" + Format.tokens(smallest) + " MiB, the smallest device)";
        return new Known<>(bytes, shown, Source.DETECTED, given.detected().source());
    }

    private Integer findDevices() {
        Experiment.HardwareSpec declared = experiment.hardware();
        Integer detected =
                given.detected() == null || given.detected().devices().isEmpty()
                        ? null
                        : given.detected().devices().size();
        return first(
                "devices",
                () -> counted(given.devices(), Source.FLAG, "--devices"),
                () -> counted(declared == null ? null : declared.devices(), Source.EXPERIMENT, "hardware.devices"),
                () -> counted(
                        detected,
                        Source.DETECTED,
                        detected == null ? null : given.detected().source()));
    }

    /**
     * What one source tells of a value: the value (null when it tells nothing), its text in the plan, where it came
     * from.
     */
    private record Known<T>(T value, String shown, Source source, String where) {}

    private static Known<Long> inGib(Double gib, Source source, String where) {
        Long bytes = gib == null ? null : gib(gib);
        return new Known<>(bytes, bytes == null ? null : Format.gib(bytes), source, where);
    }

    private static Known<Integer> counted(Integer n, Source source, String where) {
        return new Known<>(n, n == null ? null : Integer.toString(n), source, where);
    }

    // The first source that tells the value wins and is recorded as an input; later sources are not asked (one of
    // them reads a file).
    @SafeVarargs
    private <T> T first(String name, Supplier<Known<T>>... sources) {
        for (Supplier<Known<T>> source : sources) {
            Known<T> k = source.get();
            if (k.value() != null) {
                base.input(name, k.shown(), k.source(), k.where());
                return k.value();
            }
        }
        return null;
    }

    /** A look-up done once, when first asked for; null is an answer too. */
    private static final class Once<T> {
        private final Supplier<T> find;
        private boolean looked;
        private T value;

        Once(Supplier<T> find) {
            this.find = find;
        }

        T get() {
            if (!looked) {
                looked = true;
                value = find.get();
            }
            return value;
        }

        /** The value when it was looked up already, else null (without looking it up). */
        T ifLooked() {
            return looked ? value : null;
        }
    }

    private Path modelDir() {
        String model = experiment.model();
        if (model == null || model.isBlank()) {
            return null;
        }
        return Path.of(model);
    }

    private Path relativeToExperiment(String path) {
        Path p = Path.of(path);
        Path dir = experiment.file() == null
                ? null
                : experiment.file().toAbsolutePath().getParent();
        return p.isAbsolute() || dir == null ? p : dir.resolve(p);
    }

    private Path indexFile() {
        ModelConfig cfg = config.ifLooked();
        if (cfg != null) {
            Path beside = cfg.file().toAbsolutePath().getParent().resolve("model.safetensors.index.json");
            if (Files.isRegularFile(beside)) {
                return beside;
            }
        }
        Path dir = modelDir();
        Path inModel = dir == null ? null : dir.resolve("model.safetensors.index.json");
        return inModel != null && Files.isRegularFile(inModel) ? inModel : null;
    }

    private static Long totalSize(Path index) {
        try {
            JsonNode size =
                    JSON.readTree(Files.readString(index)).path("metadata").path("total_size");
            return size.isNumber() && size.asLong() > 0 ? size.asLong() : null;
        } catch (IOException | JacksonException e) {
            return null;
        }
    }

    static long gib(double gib) {
        return Math.round(gib * Format.GIB);
    }
}
