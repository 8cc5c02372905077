package dev.ctxprobe.embedded;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.AtomicMoveNotSupportedException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.security.DigestInputStream;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HexFormat;
import java.util.Locale;

/**
 * The demo models in the user's cache folder: generated on first use, written atomically, checked against a SHA-256
 * sidecar and regenerated when missing or corrupt.
 */
public final class DemoModel {
    /** Overrides the cache folder, as a system property or an environment variable. */
    public static final String CACHE_PROPERTY = "ctxprobe.cache";

    public static final String CACHE_ENV = "CTXPROBE_CACHE";

    /** The fixed seed: every machine generates byte-identical demo models. */
    public static final long SEED = 42;

    private DemoModel() {}

    /** The cache folder: {@code -Dctxprobe.cache}, {@code $CTXPROBE_CACHE}, {@code $XDG_CACHE_HOME/ctxprobe} or {@code ~/.cache/ctxprobe}. */
    public static Path cacheDir() {
        String explicit = System.getProperty(CACHE_PROPERTY, System.getenv(CACHE_ENV));
        if (explicit != null && !explicit.isBlank()) {
            return Path.of(explicit);
        }
        String xdg = System.getenv("XDG_CACHE_HOME");
        if (xdg != null && !xdg.isBlank()) {
            return Path.of(xdg, "ctxprobe");
        }
        return Path.of(System.getProperty("user.home"), ".cache", "ctxprobe");
    }

    /** The demo model for {@code shape} in the default cache folder, generated if needed. */
    public static Path ensure(ModelShape shape) throws IOException {
        return ensure(cacheDir(), shape, GgufWriter.WeightType.F32);
    }

    /** The demo model for {@code shape} in {@code dir}, (re)generated when missing or not matching its checksum. */
    public static Path ensure(Path dir, ModelShape shape, GgufWriter.WeightType type) throws IOException {
        Files.createDirectories(dir);
        String base = "ctxprobe-" + shape.name() + "-" + type.name().toLowerCase(Locale.ROOT) + "-v1.gguf";
        Path model = dir.resolve(base);
        Path sidecar = dir.resolve(base + ".sha256");
        if (isIntact(model, sidecar)) {
            return model;
        }
        // Unique temp names: two processes may generate at once; both produce identical bytes, the last rename wins.
        Path tmpModel = Files.createTempFile(dir, base, ".tmp");
        Path tmpSidecar = Files.createTempFile(dir, base, ".sha256.tmp");
        try {
            GgufWriter.write(shape, type, SEED, tmpModel);
            Files.writeString(tmpSidecar, sha256(tmpModel) + "\n", StandardCharsets.US_ASCII);
            move(tmpSidecar, sidecar);
            move(tmpModel, model);
        } finally {
            Files.deleteIfExists(tmpModel);
            Files.deleteIfExists(tmpSidecar);
        }
        return model;
    }

    static boolean isIntact(Path model, Path sidecar) throws IOException {
        if (!Files.isRegularFile(model) || !Files.isRegularFile(sidecar)) {
            return false;
        }
        String expected = Files.readString(sidecar, StandardCharsets.US_ASCII).trim();
        return expected.equals(sha256(model));
    }

    private static void move(Path from, Path to) throws IOException {
        try {
            Files.move(from, to, StandardCopyOption.ATOMIC_MOVE, StandardCopyOption.REPLACE_EXISTING);
        } catch (AtomicMoveNotSupportedException e) {
            Files.move(from, to, StandardCopyOption.REPLACE_EXISTING);
        }
    }

    static String sha256(Path file) throws IOException {
        MessageDigest md;
        try {
            md = MessageDigest.getInstance("SHA-256");
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
        try (InputStream in = new DigestInputStream(Files.newInputStream(file), md)) {
            in.transferTo(java.io.OutputStream.nullOutputStream());
        }
        return HexFormat.of().formatHex(md.digest());
    }
}
