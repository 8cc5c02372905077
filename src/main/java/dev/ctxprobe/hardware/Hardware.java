package dev.ctxprobe.hardware;

import java.util.List;

/**
 * The machine's accelerators for a result's metadata, e.g. name {@code 8x NVIDIA H200 143GB}, accelerator
 * {@code NVIDIA H200}, chip {@code nvidia_h200}.
 *
 * @param source the tool that answered: {@code nvidia-smi}, {@code rocm-smi}, {@code xpu-smi} or {@code cpu}
 * @param unknownReason null when known; else why the machine could not be fully determined (when an
 *     accelerator tool failed, name, accelerator and chip are {@code unknown})
 */
public record Hardware(
        String name, String accelerator, String chip, List<Device> devices, String source, String unknownReason) {

    public static final String UNKNOWN = "unknown";

    public Hardware {
        devices = List.copyOf(devices);
    }

    /** True when the machine could not be fully determined. */
    public boolean unknown() {
        return unknownReason != null;
    }
}
