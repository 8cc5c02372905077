package dev.ctxprobe.run;

/** This ctxprobe's version, as results record it. */
public final class Version {
    private Version() {}

    /** The version from the jar manifest, or "dev" when running from classes. */
    public static String of() {
        String v = Version.class.getPackage().getImplementationVersion();
        return v == null ? "dev" : v;
    }
}
