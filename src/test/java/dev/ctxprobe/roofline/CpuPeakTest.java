package dev.ctxprobe.roofline;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;

/**
 * The CPU's peak must be honest (docs/results.md, "Peaks"): above what a matrix multiply measured on this machine
 * reaches, so that a floor computed from it stays below any real prefill; and not so far above it that the demo's
 * "% of roofline" says nothing.
 */
class CpuPeakTest {

    @Test
    void thePeakIsAboveAMeasuredMatrixMultiplyOnOneCore() {
        CpuPeak oneCore = CpuPeak.detect(1);
        int n = 256;
        float[] a = new float[n * n];
        float[] b = new float[n * n];
        float[] c = new float[n * n];
        for (int i = 0; i < a.length; i++) {
            a[i] = (i % 7) * 0.5f;
            b[i] = (i % 5) * 0.25f;
        }
        double best = 0;
        for (int round = 0; round < 30; round++) {
            java.util.Arrays.fill(c, 0);
            long start = System.nanoTime();
            multiply(a, b, c, n);
            double seconds = (System.nanoTime() - start) / 1e9;
            best = Math.max(best, 2.0 * n * n * n / seconds);
        }
        double measuredGflops = best / 1e9;
        double peakGflops = oneCore.tflops() * 1000;
        System.out.printf(
                "CPU peak of one core %.1f GFLOPS (%s); measured matrix multiply %.1f GFLOPS (%.0f%%); c[7] = %.1f%n",
                peakGflops, oneCore.how(), measuredGflops, 100 * measuredGflops / peakGflops, c[7]);
        assertThat(measuredGflops).isLessThan(peakGflops);
        // A JIT-vectorized loop reaches a few percent of the vector peak or more: a peak 1,000 times the measurement
        // would be a wrong reading of the clock or the vector unit.
        assertThat(measuredGflops).isGreaterThan(peakGflops / 1000);
    }

    // i-k-j order: the inner loop runs over contiguous rows, which the JIT vectorizes.
    private static void multiply(float[] a, float[] b, float[] c, int n) {
        for (int i = 0; i < n; i++) {
            for (int k = 0; k < n; k++) {
                float aik = a[i * n + k];
                int row = k * n;
                int out = i * n;
                for (int j = 0; j < n; j++) {
                    c[out + j] += aik * b[row + j];
                }
            }
        }
    }

    @Test
    void allCoresArePeakTimesCores() {
        CpuPeak one = CpuPeak.detect(1);
        CpuPeak two = CpuPeak.detect(2);
        assertThat(two.tflops()).isEqualTo(one.tflops() * two.cores());
        assertThat(one.how()).contains("GHz").contains("FLOPs a cycle");
    }
}
