package dev.ctxprobe.run;

import dev.ctxprobe.engines.Engine;
import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.experiment.Experiment;
import dev.ctxprobe.experiment.Experiment.Backend;
import dev.ctxprobe.experiment.FileReason;
import dev.ctxprobe.explore.Plan;
import dev.ctxprobe.hardware.Hardware;
import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.launch.Launchers;
import dev.ctxprobe.secrets.Redactor;
import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * What must hold on this machine before the first launch, checked before the run folder exists: each server's
 * program can be found, a model the engine needs as a local path is there, the output folder is writable. A step
 * that cannot start for these reasons says nothing about context length; nine launches that each fail with
 * "setsid: failed to execute vllm" end in a frontier about a program that is not there. Declared hardware that
 * disagrees with what is detected is a warning: the results would record it as if it were true.
 *
 * <p>Only backends with the local launcher are checked for programs and models: a cluster launcher runs the command
 * on another machine, whose PATH and files this one cannot see.
 */
public final class Preflight {
    /** The first word that runs this ctxprobe itself. */
    private static final String SELF = "ctxprobe";

    private static final Pattern COUNT = Pattern.compile("^(\\d+)\\s*x\\s+", Pattern.CASE_INSENSITIVE);

    private Preflight() {}

    /**
     * What was found: problems refuse the run, warnings are printed and the run goes on; each is one sentence saying
     * what to do, without a prefix.
     */
    public record Findings(List<String> problems, List<String> warnings) {
        public Findings {
            problems = List.copyOf(problems);
            warnings = List.copyOf(warnings);
        }

        public boolean ok() {
            return problems.isEmpty();
        }
    }

    /** The run cannot start here; nothing was launched and no folder was created. */
    public static final class Refused extends Exception {
        private static final long serialVersionUID = 1L;
        private final transient Findings findings;

        Refused(Findings findings) {
            super(String.join("; ", findings.problems()));
            this.findings = findings;
        }

        public Findings findings() {
            return findings;
        }
    }

    private static final String LLAMA_SERVER = "llama-server";

    /** Where a clone of ctxprobe gets one (README.md, Tests): its own script, no package installed. */
    private static final String LLAMA_SERVER_INSTALL = "; in a clone of ctxprobe, .ci/install-llama-server installs"
            + " Debian's build under ~/.cache/ctxprobe/llama-server (about 3 s) and prints its path";

    /**
     * Checks {@code e} (overrides applied) against this machine.
     *
     * @param writeTo the folder the run will write into (created if missing), or null not to check one
     * @param env the environment ctxprobe runs in (PATH), which each backend's own {@code env} extends
     */
    public static Findings check(Experiment e, Path writeTo, HardwareProbe hardware, Map<String, String> env) {
        List<String> problems = new ArrayList<>();
        List<String> warnings = new ArrayList<>();
        boolean anyLocal = false;
        for (Plan.BackendPlan b : Plan.of(e).backends()) {
            Backend backend = b.backend();
            if (!b.steps().isEmpty()) {
                shortSecret(backend.name(), b.steps().getFirst().command().secrets())
                        .ifPresent(warnings::add);
            }
            if (b.steps().isEmpty() || !backend.launcher().kind().equals(Launchers.DEFAULT_KIND)) {
                continue;
            }
            anyLocal = true;
            List<String> argv = b.steps().getFirst().command().argv();
            String path = backend.env().getOrDefault("PATH", env.getOrDefault("PATH", ""));
            program(backend.name(), argv.getFirst(), path)
                    .map(p -> argv.getFirst().endsWith(LLAMA_SERVER) ? p + LLAMA_SERVER_INSTALL : p)
                    .ifPresent(problems::add);
            problems.addAll(models(e, backend, argv));
        }
        if (anyLocal) {
            // The local launcher starts each server with setsid, so that its whole process group can be stopped.
            if (find("setsid", env.getOrDefault("PATH", "")) == null) {
                problems.add("setsid is not on PATH; ctxprobe starts each server with it (install util-linux)");
            }
        }
        if (writeTo != null) {
            writable(writeTo).ifPresent(problems::add);
        }
        if (anyLocal && e.hardware() != null) {
            hardwareMismatch(e.hardware(), hardware.hardware()).ifPresent(warnings::add);
        }
        return new Findings(problems, warnings);
    }

    /**
     * A secret of a command too short to be masked in free text (docs/experiment-file.md#keys-in-a-command): the
     * command shows it masked, but a server log that prints it keeps it, because masking every "1234" of a log would
     * garble its numbers and words.
     */
    private static java.util.Optional<String> shortSecret(String backend, List<String> secrets) {
        return secrets.stream()
                .filter(v -> !v.isEmpty() && v.length() < Redactor.MIN_LENGTH)
                .findFirst()
                .map(v -> String.format(
                        Locale.ROOT,
                        "backend '%s': a secret in its command is %d characters long; it is masked where the command"
                                + " is shown, but not in the server's log text, where values under %d characters are"
                                + " left alone (masking them would garble numbers and words): use a longer key",
                        backend,
                        v.length(),
                        Redactor.MIN_LENGTH));
    }

    private static java.util.Optional<String> program(String backend, String program, String path) {
        if (program.equals(SELF)) {
            return java.util.Optional.empty();
        }
        if (program.contains("/")) {
            Path p = Path.of(program);
            if (!Files.exists(p)) {
                return java.util.Optional.of("backend " + backend + ": the program " + program
                        + " does not exist; fix the path at the start of its command");
            }
            if (Files.isDirectory(p) || !Files.isExecutable(p)) {
                return java.util.Optional.of("backend " + backend + ": " + program
                        + " is not an executable program; fix the path at the start of its command");
            }
            return java.util.Optional.empty();
        }
        if (find(program, path) != null) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("backend " + backend + ": the program '" + program + "' is not on PATH; install"
                + " it, activate the environment that has it, or give its full path in the command");
    }

    /** The executable {@code name} in one of {@code path}'s folders, or null. */
    static Path find(String name, String path) {
        for (String dir : path.split(File.pathSeparator)) {
            Path candidate = Path.of(dir.isEmpty() ? "." : dir).resolve(name);
            if (Files.isRegularFile(candidate) && Files.isExecutable(candidate)) {
                return candidate;
            }
        }
        return null;
    }

    /**
     * A model the server would not find: for an engine that reads only local files (llama.cpp, the embedded engine)
     * the file after the options that name its model ({@link Engine#localModelFlags}); for every other engine the
     * experiment's {@code model} when the command uses it and it is written as a path (absolute, or starting with ./
     * or ../). vLLM, SGLang, TGI and the others download a hub id such as {@code deepseek-ai/DeepSeek-V4-Flash}, so a
     * relative name without ./ is not checked.
     */
    private static List<String> models(Experiment e, Backend backend, List<String> argv) {
        Set<String> missing = new LinkedHashSet<>();
        Engine engine = Engines.get(backend.engine());
        List<String> options = engine.localModelFlags();
        for (int i = 1; i < argv.size(); i++) {
            String arg = argv.get(i);
            for (String option : options) {
                String value = null;
                if (arg.equals(option) && i + 1 < argv.size()) {
                    value = argv.get(i + 1);
                } else if (arg.startsWith(option + "=")) {
                    value = arg.substring(option.length() + 1);
                }
                if (value != null && !Files.exists(Path.of(value))) {
                    missing.add("backend " + backend.name() + ": the model file " + value + " (" + option
                            + ") does not exist; " + backend.engine() + " reads only local files, so fix the path");
                } else if (value != null && !gguf(Path.of(value))) {
                    // What plan already sees ("no GGUF magic"): launched, the server would only fail to load it.
                    missing.add("backend " + backend.name() + ": the model file " + value + " (" + option
                            + ") is not a GGUF file (no GGUF magic in its first bytes); " + backend.engine()
                            + " loads GGUF files only: give the .gguf file (the first part of a split model)");
                }
            }
        }
        String model = e.model();
        boolean asPath = model.startsWith("/") || model.startsWith("./") || model.startsWith("../");
        boolean used = argv.stream().anyMatch(a -> a.equals(model) || a.endsWith("=" + model));
        if (asPath && !engine.localModelOnly() && used && !Files.exists(Path.of(model))) {
            missing.add("backend " + backend.name() + ": the model " + model + " does not exist on this machine; fix"
                    + " 'model' in the experiment, or give a hub id such as deepseek-ai/DeepSeek-V4-Flash for the"
                    + " engine to download");
        }
        return List.copyOf(missing);
    }

    /** Whether {@code file} starts with GGUF's magic; a folder or an unreadable file does not. */
    private static boolean gguf(Path file) {
        if (!Files.isRegularFile(file)) {
            return false;
        }
        try (java.io.InputStream in = Files.newInputStream(file)) {
            return java.util.Arrays.equals(
                    in.readNBytes(4), "GGUF".getBytes(java.nio.charset.StandardCharsets.US_ASCII));
        } catch (java.io.IOException unreadable) {
            return false;
        }
    }

    /** What the write test writes: one block, so that a full disk fails it (an empty file fits on one). */
    static final int WRITE_TEST_BYTES = 4096;

    /**
     * Whether a file can be written in {@code dir}: its nearest existing folder is tried with a block of {@link
     * #WRITE_TEST_BYTES}, forced to the disk and deleted at once, so the answer is the operating system's (a
     * read-only or full file system, permissions, a file in the way), and nothing is created where the run would
     * refuse.
     */
    static java.util.Optional<String> writable(Path dir) {
        Path existing = dir.toAbsolutePath().normalize();
        while (existing != null && !Files.exists(existing)) {
            existing = existing.getParent();
        }
        if (existing == null) {
            return java.util.Optional.of("cannot write results to " + dir + ": no part of that path exists");
        }
        if (!Files.isDirectory(existing)) {
            return java.util.Optional.of("cannot write results to " + dir + ": " + existing
                    + " is a file, not a folder; give another --out");
        }
        try {
            Path probe = Files.createTempFile(existing, ".ctxprobe-write-check-", "");
            try (java.nio.channels.FileChannel f =
                    java.nio.channels.FileChannel.open(probe, java.nio.file.StandardOpenOption.WRITE)) {
                java.nio.ByteBuffer block = java.nio.ByteBuffer.allocate(WRITE_TEST_BYTES);
                while (block.hasRemaining()) {
                    f.write(block);
                }
                f.force(true);
            } finally {
                Files.deleteIfExists(probe);
            }
            return java.util.Optional.empty();
        } catch (IOException e) {
            return java.util.Optional.of("cannot write results to " + dir + ": " + existing + ": " + FileReason.of(e)
                    + "; give a folder you can write to with --out");
        }
    }

    /**
     * A warning when the hardware an experiment declares is not the machine it runs on: another accelerator, or
     * another number of them.
     */
    static java.util.Optional<String> hardwareMismatch(Experiment.HardwareSpec declared, Hardware detected) {
        String said = declared.name() != null ? declared.name() : declared.accelerator();
        if (said == null) {
            return java.util.Optional.empty();
        }
        if (detected.unknown()) {
            return java.util.Optional.of("the experiment declares hardware '" + said + "', which cannot be"
                    + " checked here (" + detected.unknownReason() + "); the results will record it as declared");
        }
        String wantAccelerator = declared.accelerator() != null
                ? declared.accelerator()
                : COUNT.matcher(said).replaceFirst("");
        boolean sameKind = detected.accelerator().toLowerCase(Locale.ROOT).contains(firstWords(wantAccelerator))
                || wantAccelerator
                        .toLowerCase(Locale.ROOT)
                        .contains(detected.accelerator().toLowerCase(Locale.ROOT));
        Matcher count = COUNT.matcher(said);
        Integer devices =
                declared.devices() != null ? declared.devices() : count.find() ? Integer.valueOf(count.group(1)) : null;
        boolean sameCount = devices == null
                || detected.devices().isEmpty()
                || devices == detected.devices().size();
        if (sameKind && sameCount) {
            return java.util.Optional.empty();
        }
        return java.util.Optional.of("the experiment declares hardware '" + said + "' but this machine has "
                + detected.name() + "; the results will record the declared hardware (remove 'hardware:' to record"
                + " what is detected)");
    }

    // "NVIDIA H200 143GB" and "NVIDIA H200" name the same accelerator: compare without the memory suffix.
    private static String firstWords(String accelerator) {
        return accelerator
                .toLowerCase(Locale.ROOT)
                .replaceAll("\\s+\\d+\\s*gb$", "")
                .strip();
    }
}
