package dev.ctxprobe.launch;

import dev.ctxprobe.hardware.HardwareProbe;
import java.nio.file.Path;

/**
 * What a launcher of one run is given: the run folder (logs, the ledger), the ledger itself and the machine's
 * accelerator queries.
 */
public record LaunchContext(Path runDir, Ledger ledger, HardwareProbe hardware) {}
