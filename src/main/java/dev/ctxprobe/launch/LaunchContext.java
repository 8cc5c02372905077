package dev.ctxprobe.launch;

import dev.ctxprobe.hardware.HardwareProbe;
import dev.ctxprobe.secrets.Redactor;
import java.nio.file.Path;
import java.util.List;

/**
 * What a launcher of one run is given: the run folder (logs, the ledger), the ledger itself, the machine's
 * accelerator queries, and the run's rules for what servers get and what their logs keep.
 *
 * @param redactor masks secret values in the server logs a launcher writes
 * @param passEnv names or {@code PREFIX*} patterns of ctxprobe's environment that servers get besides {@link
 *     ServerEnvironment#ALLOWED} (the experiment's {@code pass_env})
 * @param serverLogBytes the most bytes one server's log keeps (head and tail)
 */
public record LaunchContext(
        Path runDir,
        Ledger ledger,
        HardwareProbe hardware,
        Redactor redactor,
        List<String> passEnv,
        long serverLogBytes) {

    /** The default cap of a server log: 64 MiB. */
    public static final long DEFAULT_SERVER_LOG_BYTES = 64L << 20;

    public LaunchContext {
        passEnv = List.copyOf(passEnv);
    }

    /** A context with no secrets to mask, nothing passed beyond the allow-list and the default log cap. */
    public LaunchContext(Path runDir, Ledger ledger, HardwareProbe hardware) {
        this(runDir, ledger, hardware, Redactor.NONE, List.of(), DEFAULT_SERVER_LOG_BYTES);
    }
}
