package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

class OomKillsTest {
    @TempDir
    Path dir;

    @Test
    void theCountIsReadFromCgroupV2sMemoryEvents() throws Exception {
        Path self = Files.writeString(dir.resolve("cgroup"), "0::/user.slice/run-1.scope\n");
        Path scope = Files.createDirectories(dir.resolve("root/user.slice/run-1.scope"));
        Files.writeString(scope.resolve("memory.events"), "low 0\nhigh 0\nmax 3\noom 2\noom_kill 2\n");
        assertThat(OomKills.count(self, dir.resolve("root"))).isEqualTo(2L);
    }

    @Test
    void aContainersV1MountIsItsOwnCgroup() throws Exception {
        Path self = Files.writeString(dir.resolve("cgroup"), "4:memory:/process_api/abc\n0::/\n");
        Path memory = Files.createDirectories(dir.resolve("root/memory"));
        Files.writeString(memory.resolve("memory.oom_control"), "oom_kill_disable 0\nunder_oom 0\noom_kill 5\n");
        assertThat(OomKills.count(self, dir.resolve("root"))).isEqualTo(5L);
        assertThat(OomKills.count(dir.resolve("missing"), dir.resolve("root"))).isNull();
    }

    @Test
    void aSigkillIsTheOomKillersOnlyWhenItsCountGrew() {
        assertThat(OomKills.sigkillCause(3L, 4L)).startsWith("the kernel's OOM killer (oom_kill 3 -> 4");
        assertThat(OomKills.sigkillCause(3L, 3L)).startsWith("killed from outside: not the OOM killer");
        assertThat(OomKills.sigkillCause(null, 3L)).isNull();
    }
}
