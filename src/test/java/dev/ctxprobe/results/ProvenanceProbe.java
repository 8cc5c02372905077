package dev.ctxprobe.results;

import java.nio.file.Path;

/** Prints Provenance.git of a file, in a process of its own, so a test can give it another PATH. */
public final class ProvenanceProbe {
    private ProvenanceProbe() {}

    public static void main(String[] args) {
        System.out.println(Provenance.git(Path.of(args[0])));
    }
}
