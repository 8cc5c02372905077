package de.kherud.llama;

import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.Arrays;
import java.util.Comparator;
import java.util.stream.Stream;

/**
 * Reaches package-private parts of java-llama.cpp 4.2.0 that ctxprobe needs; a class in the library's package is
 * checked by the compiler, where reflection would fail only at run time. (1) Prompts of token ids: the public API
 * takes strings only, but the llama.cpp server underneath accepts a JSON array of ids, and ctxprobe must send prompts
 * of an exact token count (a string would be re-tokenized and get a BOS). (2) {@link LlamaException} is not public,
 * yet a load failure must be told apart from other runtime errors. (3) The native library's loading, which the
 * library does in a way parallel servers cannot share (see {@link #loadNativeLibrary}).
 */
public final class LlamaBridge {
    /** The library's own property for where it extracts to; honoured as the parent of ctxprobe's folder. */
    static final String TMPDIR_PROPERTY = "de.kherud.llama.tmpdir";

    private static final String LIB_PATH_PROPERTY = "de.kherud.llama.lib.path";

    private LlamaBridge() {}

    /** The native library could not be extracted or loaded; the message says why in a user's words. */
    public static final class NativeLibraryException extends Exception {
        private static final long serialVersionUID = 1L;

        NativeLibraryException(String message, Throwable cause) {
            super(message, cause);
        }
    }

    /**
     * Loads llama.cpp's native library from a copy of this process's own, then deletes the copy (the mapping stays).
     * Left to itself the library extracts every process's copy to the same {@code <tmpdir>/libjllama.so}, overwrites
     * it while another process may be loading it, deletes it on exit under the feet of the next, and first deletes
     * files named {@code llama*} in the temp folder. Here each process extracts into a fresh folder, points the
     * library at it for both its load path and its temp folder, and leaves nothing behind, even when killed.
     *
     * @throws NativeLibraryException with the reason, when the library cannot be written or does not load
     */
    public static synchronized void loadNativeLibrary() throws NativeLibraryException {
        String folder = OSInfo.getNativeLibFolderPathForCurrentOS();
        String name = System.mapLibraryName("jllama");
        String resource = "/" + LlamaLoader.class.getPackageName().replace('.', '/') + "/" + folder + "/" + name;
        Path parent = Path.of(System.getProperty(TMPDIR_PROPERTY, System.getProperty("java.io.tmpdir")));
        Path dir;
        try (InputStream in = LlamaLoader.class.getResourceAsStream(resource)) {
            if (in == null) {
                throw new NativeLibraryException(
                        "llama.cpp has no native library for this system (" + folder + ") in the ctxprobe jar", null);
            }
            dir = Files.createTempDirectory(parent, "ctxprobe-jllama-");
            Files.copy(in, dir.resolve(name), StandardCopyOption.REPLACE_EXISTING);
        } catch (IOException e) {
            throw new NativeLibraryException(
                    "llama.cpp's native library could not be written to " + parent + " ("
                            + dev.ctxprobe.experiment.FileReason.of(e) + "); give a writable temp folder in"
                            + " CTXPROBE_JAVA_OPTS, e.g. -Djava.io.tmpdir=/var/tmp",
                    e);
        }
        System.setProperty(LIB_PATH_PROPERTY, dir.toString());
        System.setProperty(TMPDIR_PROPERTY, dir.toString());
        try {
            LlamaLoader.initialize();
        } catch (UnsatisfiedLinkError e) {
            throw new NativeLibraryException(
                    "llama.cpp's native library does not load on this system (" + e.getMessage() + ")", e);
        } finally {
            delete(dir);
        }
    }

    private static void delete(Path dir) {
        try (Stream<Path> files = Files.walk(dir)) {
            for (Path p : files.sorted(Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(p);
            }
        } catch (IOException | RuntimeException leftBehind) {
            // A copy left in the temp folder harms no one: the next process uses a folder of its own.
        }
    }

    /** Replaces the prompt of {@code params} with these ids, sent as-is (no BOS is added to a pure id prompt). */
    public static InferenceParameters setPromptIds(InferenceParameters params, int[] ids) {
        params.parameters.put("prompt", Arrays.toString(ids));
        return params;
    }

    /** Whether {@code e} was thrown by the native library. */
    public static boolean isLlamaException(Throwable e) {
        return e instanceof LlamaException;
    }
}
