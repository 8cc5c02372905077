package dev.ctxprobe.hardware;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class HostMemoryTest {
    @TempDir
    Path dir;

    @Test
    void theLowerOfMemTotalAndTheCgroupsLimitIsTheHostsMemory() throws Exception {
        Path meminfo = Files.writeString(dir.resolve("meminfo"), "MemTotal:       24576000 kB\nMemFree: 1 kB\n");
        Path max = Files.writeString(dir.resolve("memory.max"), "max\n");
        assertThat(HostMemory.read(meminfo, max))
                .isEqualTo(new HostMemory.Reading(24_576_000L * 1024, meminfo + " MemTotal"));

        Files.writeString(max, "4294967296\n");
        assertThat(HostMemory.read(meminfo, max).bytes()).isEqualTo(4_294_967_296L);
        assertThat(HostMemory.read(meminfo, max).source()).contains("cgroup");

        assertThat(HostMemory.read(dir.resolve("none"), dir.resolve("none"))).isNull();
    }

    @Test
    void thisMachinesMemoryIsReadWhereItIsLinux() {
        HostMemory.Reading r = HostMemory.read();
        if (Files.isReadable(Path.of("/proc/meminfo"))) {
            assertThat(r).isNotNull();
            assertThat(r.bytes()).isGreaterThan(64L << 20);
        }
    }
}
