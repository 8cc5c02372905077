package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import java.util.List;
import java.util.Optional;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

/**
 * Which startup lines are verdicts (docs/failures.md, "A fatal line is a verdict"): each engine's real fatal texts
 * are, and the warnings that only look like errors are not.
 */
class FatalLinesTest {

    private static Optional<String> firstFatal(String engine, String log) {
        FatalLines f = new FatalLines(Engines.profile(engine));
        for (String line : log.lines().toList()) {
            Optional<String> fatal = f.next(line);
            if (fatal.isPresent()) {
                return fatal;
            }
        }
        return Optional.empty();
    }

    @ParameterizedTest
    @CsvSource(
            delimiter = '|',
            value = {
                // vLLM: a tensor-parallel worker's OOM, its engine core's end, a KV refusal, an NCCL error.
                "vllm|(VllmWorker TP1 pid=9) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                "vllm|RuntimeError: Engine core initialization failed. See root cause above. Failed core proc(s): {}",
                "vllm|(EngineCore_DP0 pid=9) ERROR 07-08 14:35:34 [core.py:700] EngineCore failed to start.",
                "vllm|ValueError: To serve at least one request with the model's max seq len (30000), (6.66 GiB KV"
                        + " cache is needed",
                "vllm|torch.distributed.DistBackendError: NCCL error in: /pytorch/torch/csrc/distributed/c10d/"
                        + "ProcessGroupNCCL.cpp:3356, unhandled cuda error",
                "vllm|RuntimeError: CUDA error: an illegal memory access was encountered",
                // SGLang: a scheduler's exception and its memory refusal.
                "sglang|[2026-07-08 14:35:31 TP3] Scheduler hit an exception: Traceback (most recent call last):",
                "sglang|[2026-07-08 14:35:31 TP0] RuntimeError: Not enough memory. Please try to increase"
                        + " --mem-fraction-static.",
                // llama.cpp: a KV allocation it cannot make, a rejected argument.
                "llamacpp|llama_init_from_model: failed to initialize the context: failed to allocate buffer for kv"
                        + " cache",
                "llamacpp|error: invalid argument: --no-such-flag",
            })
    void anEnginesFatalTextIsAVerdict(String engine, String line) {
        assertThat(firstFatal(engine, line)).contains(line.strip());
    }

    @Test
    void aTracebacksLastLineIsFatalWhateverItsType() {
        String log = """
                (EngineCore_DP0 pid=123) Traceback (most recent call last):
                (EngineCore_DP0 pid=123)   File "/usr/lib/python3/site-packages/vllm/v1/engine/core.py", line 691, in run
                (EngineCore_DP0 pid=123)     raise KeyError(name)
                (EngineCore_DP0 pid=123) KeyError: 'model.layers.0.mlp.experts.w13_weight'
                """;
        assertThat(firstFatal("vllm", log))
                .contains("(EngineCore_DP0 pid=123) KeyError: 'model.layers.0.mlp.experts.w13_weight'");
        assertThat(firstFatal(
                        "sglang",
                        "[2026-07-08 14:35:31] Traceback (most recent call last):\n"
                                + "[2026-07-08 14:35:31]   File \"x.py\", line 1, in f\n"
                                + "[2026-07-08 14:35:31] AssertionError"))
                .contains("[2026-07-08 14:35:31] AssertionError");
        // llama.cpp is no Python engine: a line shaped like an exception is only a line.
        assertThat(firstFatal("llamacpp", "Traceback (most recent call last):\nKeyError: 'x'"))
                .isEmpty();
    }

    @Test
    void warningsThatLookLikeErrorsAreNotCutShort() {
        List<String[]> survived = List.of(
                new String[] {
                    "vllm",
                    "WARNING 07-08 14:35:30 [_custom_ops.py:20] Failed to import from vllm._C with"
                            + " ImportError('libcuda.so.1: cannot open shared object file: No such file or directory')"
                },
                new String[] {
                    "vllm",
                    "[W708 14:35:31.000000000 socket.cpp:204] [c10d] The hostname of the client socket cannot be"
                            + " retrieved. err=-3"
                },
                new String[] {"vllm", "NCCL INFO NCCL_SOCKET_IFNAME set to eth0"},
                new String[] {
                    "vllm",
                    "WARNING 07-08 14:35:30 [config.py:1420] Possibly too large swap space. 16.00 GiB out of"
                            + " the 31.00 GiB total CPU memory is allocated for the swap space."
                },
                new String[] {
                    "sglang",
                    "[2026-07-08 14:35:31] WARNING server_args.py:1012: Cuda graph is disabled because of using"
                            + " torch native attention backend"
                },
                new String[] {
                    "llamacpp",
                    "llama_context: n_ctx_seq (25000192) > n_ctx_train (1048576) -- possible training context"
                            + " overflow"
                },
                new String[] {"llamacpp", "llama_params_fit: context size reduced from 1048576 to 262144"});
        for (String[] w : survived) {
            assertThat(firstFatal(w[0], w[1])).as(w[0] + ": " + w[1]).isEmpty();
        }
    }

    @Test
    void aFatalLineIsDiagnosedByTheRuleThatNamesItsRootCause() {
        String log = """
                INFO 07-08 14:35:30 [core.py:71] Initializing a V1 LLM engine
                (VllmWorker TP1 pid=9) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.
                """;
        Diagnosis d = Engines.profile("vllm")
                .diagnoseFatal(
                        "(VllmWorker TP1 pid=9) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00"
                                + " GiB.",
                        log.lines().toList());
        assertThat(d.failureClass().id()).isEqualTo("oom_startup");
        Diagnosis other = Engines.profile("vllm")
                .diagnoseFatal(
                        "RuntimeError: CUDA error: an illegal memory access was encountered",
                        List.of("INFO loading", "RuntimeError: CUDA error: an illegal memory access was encountered"));
        assertThat(other.failureClass().id()).isEqualTo("startup_crash");
        assertThat(other.detail()).contains("illegal memory access");
        assertThat(other.evidence()).contains("RuntimeError: CUDA error: an illegal memory access was encountered");
    }
}
