package dev.ctxprobe.launch;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** The latest line a progress display shows from a server log, on texts as vLLM, SGLang and uvicorn write them. */
class ServerLogTest {
    @TempDir
    Path dir;

    private String latest(String text) throws IOException {
        Path log = Files.writeString(dir.resolve("server.log"), text);
        return ServerLog.latestLine(log).orElse(null);
    }

    @Test
    void aProgressBarShowsItsLatestUpdate() throws IOException {
        assertThat(latest("INFO 07-08 14:35:01 [gpu_model_runner.py:1843] Starting to load model /data/m...\n"
                        + "Loading safetensors checkpoint shards:   0% Completed | 0/64 [00:00<?, ?it/s]\r"
                        + "Loading safetensors checkpoint shards:  44% Completed | 28/64 [00:44<00:56,  1.57s/it]\r"
                        + "Loading safetensors checkpoint shards:  45% Completed | 29/64 [00:45<00:54,  1.56s/it]"))
                .isEqualTo("Loading safetensors checkpoint shards:  45% Completed | 29/64 [00:45<00:54,  1.56s/it]");
    }

    @Test
    void vllmsWorkerTagTimeAndSourceAreLeftOut() throws IOException {
        assertThat(latest("(VllmWorker TP0 pid=4711) INFO 07-08 14:36:40 [gpu_model_runner.py:2567] Graph capturing"
                        + " finished in 5 secs, took 0.51 GiB\n"))
                .isEqualTo("Graph capturing finished in 5 secs, took 0.51 GiB");
        assertThat(latest("(EngineCore_DP0 pid=123) INFO 07-08 14:35:30 [core.py:70] Capturing CUDA graphs\n"))
                .isEqualTo("Capturing CUDA graphs");
    }

    @Test
    void sglangsTimeAndRankAreLeftOut() throws IOException {
        assertThat(latest(
                        "[2026-07-08 14:36:40 TP0] Load weight end. type=DeepseekV3ForCausalLM, avail mem=10.31 GB\n"))
                .isEqualTo("Load weight end. type=DeepseekV3ForCausalLM, avail mem=10.31 GB");
    }

    @Test
    void accessLogsOfTheReadinessPollsAndBlankLinesAreSkipped() throws IOException {
        assertThat(latest("[2026-07-08 14:36:41] Capture cuda graph begin. This can take up to several minutes.\n"
                        + "INFO:     127.0.0.1:52312 - \"GET /health HTTP/1.1\" 503 Service Unavailable\n"
                        + "srv  log_server_r: request: GET /health 127.0.0.1 503\n"
                        + "\n"
                        + "=========\n"))
                .isEqualTo("Capture cuda graph begin. This can take up to several minutes.");
    }

    @Test
    void coloursAreRemovedAndLongLinesCut() throws IOException {
        assertThat(latest("\u001B[32mINFO\u001B[0m Connected\n")).isEqualTo("Connected");
        assertThat(latest("x".repeat(1000) + "\n")).hasSize(240).endsWith("…");
    }

    @Test
    void anEmptyOrMissingLogHasNoLine() throws IOException {
        assertThat(latest("")).isNull();
        assertThat(ServerLog.latestLine(dir.resolve("none.log"))).isEmpty();
    }

    @Test
    void onlyTheTailOfAHugeLogIsRead() throws IOException {
        String head = "early line\n".repeat(100_000);
        assertThat(latest(head + "the last word\n")).isEqualTo("the last word");
    }
}
