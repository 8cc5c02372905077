package dev.ctxprobe.testsupport;

import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import java.util.Arrays;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Tests that need something a user's machine may lack (a real llama-server, a Slurm cluster, Chromium) skip with
 * a visible reason there; CI lists what it installed in {@code CTXPROBE_REQUIRE} (comma-separated names, or
 * {@code all}), and then the same absence fails the test instead of hiding it.
 */
public final class Required {
    private Required() {}

    /** Skips (or, when CI requires {@code name}, fails) unless {@code present}, saying {@code why}. */
    public static void assumePresent(String name, boolean present, String why) {
        if (present) {
            return;
        }
        String message = name + " is not available: " + why;
        if (required(name)) {
            fail(message + " (CTXPROBE_REQUIRE asks for " + name + ")");
        }
        assumeTrue(false, message + "; set it up (see README, Tests) or these tests stay skipped");
    }

    /** True when the environment says {@code name} must be there. */
    public static boolean required(String name) {
        String value = System.getenv("CTXPROBE_REQUIRE");
        if (value == null || value.isBlank()) {
            return false;
        }
        Set<String> names = Arrays.stream(value.split(",")).map(String::strip).collect(Collectors.toSet());
        return names.contains("all") || names.contains(name);
    }
}
