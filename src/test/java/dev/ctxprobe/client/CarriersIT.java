package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * The carriers ctxprobe sets for itself take effect in a JVM started without any flag, as {@code java -jar} starts
 * it, and a value given on the command line still wins. Each case is a fresh JVM, since the JDK reads the setting
 * once, when the first virtual thread starts; the count is of the carrier threads busy virtual threads really ran on.
 */
class CarriersIT {

    @Test
    void aPlainJvmRunsOnHalfTheCores() throws Exception {
        int cores = Runtime.getRuntime().availableProcessors();
        assertThat(carriersSeen()).isEqualTo(Carriers.forCores(cores));
    }

    @Test
    void aValueGivenOnTheCommandLineWins() throws Exception {
        assertThat(carriersSeen("-D" + Carriers.PROPERTY + "=2")).isEqualTo(2);
    }

    @Test
    void halfTheCoresIsAtLeastOne() {
        assertThat(Carriers.forCores(1)).isEqualTo(1);
        assertThat(Carriers.forCores(2)).isEqualTo(1);
        assertThat(Carriers.forCores(16)).isEqualTo(8);
    }

    private static int carriersSeen(String... jvmFlags) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(List.of(jvmFlags));
        command.addAll(List.of("-cp", System.getProperty("java.class.path"), Probe.class.getName()));
        Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes(), StandardCharsets.UTF_8).strip();
        assertThat(p.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(p.exitValue()).as(out).isZero();
        return Integer.parseInt(out);
    }

    /** Configures as ctxprobe's main does, then counts the carriers that spinning virtual threads occupy. */
    static final class Probe {
        public static void main(String[] args) throws InterruptedException {
            Carriers.configure();
            Set<String> carriers = ConcurrentHashMap.newKeySet();
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < 16; i++) {
                threads.add(Thread.ofVirtual().start(() -> {
                    long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(100);
                    while (System.nanoTime() < until) {
                        // "VirtualThread[#22]/runnable@ForkJoinPool-1-worker-1": the part after '@' is its carrier.
                        String name = Thread.currentThread().toString();
                        carriers.add(name.substring(name.indexOf('@') + 1));
                    }
                }));
            }
            for (Thread t : threads) {
                t.join();
            }
            System.out.println(carriers.size());
        }
    }
}
