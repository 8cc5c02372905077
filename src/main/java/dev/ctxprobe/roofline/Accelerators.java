package dev.ctxprobe.roofline;

import dev.ctxprobe.results.PrefillFloor.Peak;
import java.util.List;
import java.util.Locale;

/**
 * Dense peak throughput per device and dtype of the math, without sparsity, each figure with its source
 * (docs/results.md, "Peaks"). A device with no sourced figure is listed with why: its floor is unknown rather than
 * guessed.
 */
public final class Accelerators {

    /**
     * One device.
     *
     * @param keys what its name contains, lower case, spaces for {@code _} and {@code -}
     * @param peaks fastest first
     * @param unknown why there is no figure; null when there are peaks
     */
    public record Accelerator(String name, List<String> keys, List<Peak> peaks, String unknown) {}

    private static final String H100_SXM = "NVIDIA H100 SXM and H200 datasheets, dense (half the sparse figure)";

    // Most specific names first: "h100 pcie" before "h100".
    private static final List<Accelerator> TABLE = List.of(
            gpu("NVIDIA H100 PCIe", List.of("h100 pcie"), 756, 1513, "NVIDIA H100 datasheet, PCIe, dense"),
            gpu("NVIDIA H100 NVL", List.of("h100 nvl"), 835, 1671, "NVIDIA H100 datasheet, NVL, dense"),
            gpu("NVIDIA H200 NVL", List.of("h200 nvl"), 835, 1671, "NVIDIA H200 datasheet, NVL, dense"),
            gpu("NVIDIA GH200", List.of("gh200"), 989, 1979, H100_SXM),
            gpu("NVIDIA H200", List.of("h200"), 989, 1979, H100_SXM),
            gpu("NVIDIA H100 SXM", List.of("h100", "h800"), 989, 1979, H100_SXM),
            gpu("NVIDIA B200", List.of("b200"), 2250, 4500, "NVIDIA DGX B200 figures divided by its 8 GPUs, dense"),
            new Accelerator(
                    "NVIDIA A100",
                    List.of("a100"),
                    List.of(new Peak("bf16", 312, "NVIDIA A100 datasheet, dense; no FP8 units")),
                    null),
            gpu("NVIDIA L40S", List.of("l40s"), 362, 733, "NVIDIA L40S datasheet, dense"),
            gpu("AMD Instinct MI300X", List.of("mi300x"), 1307.4, 2614.9, "AMD Instinct MI300X datasheet, dense"),
            gpu("AMD Instinct MI325X", List.of("mi325x"), 1307.4, 2614.9, "AMD Instinct MI325X datasheet, dense"),
            gpu(
                    "Intel Gaudi 3",
                    List.of("gaudi 3", "gaudi3", "hl 325"),
                    1835,
                    1835,
                    "Intel Gaudi 3 white paper, matrix engines"),
            unknown(
                    "Huawei Ascend 910B / 910C",
                    List.of("910b", "910c"),
                    "Huawei publishes no dense peak for the 910B or 910C that ctxprobe could cite"),
            new Accelerator(
                    "Huawei Ascend 910",
                    List.of("ascend 910"),
                    List.of(new Peak("fp16", 256, "Huawei Ascend 910 announcement (2019), FP16")),
                    null),
            unknown(
                    "Kunlunxin P800",
                    List.of("p800"),
                    "Kunlunxin publishes no dense peak for the P800 that ctxprobe could cite"));

    private Accelerators() {}

    private static Accelerator gpu(String name, List<String> keys, double bf16, double fp8, String source) {
        return new Accelerator(name, keys, List.of(new Peak("fp8", fp8, source), new Peak("bf16", bf16, source)), null);
    }

    private static Accelerator unknown(String name, List<String> keys, String why) {
        return new Accelerator(name, keys, List.of(), why);
    }

    /** The device a name (an accelerator's, a chip id like {@code nvidia_h200}) names, or null when not listed. */
    public static Accelerator find(String name) {
        if (name == null || name.isBlank()) {
            return null;
        }
        String n = name.toLowerCase(Locale.ROOT).replace('_', ' ').replace('-', ' ');
        for (Accelerator a : TABLE) {
            if (a.keys().stream().anyMatch(n::contains)) {
                return a;
            }
        }
        return null;
    }

    /** Every listed device, for docs and tests. */
    public static List<Accelerator> all() {
        return TABLE;
    }
}
