package dev.ctxprobe.launch;

import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The environment a local server starts with: not all of ctxprobe's (which may hold keys the server has no business
 * with, and which a server that logs its environment would copy into evidence), but what a server needs to run and
 * what a user would expect to pass through, then the names the experiment adds ({@code pass_env}), then the
 * experiment's own {@code env}, then the launch's mark.
 */
public final class ServerEnvironment {
    /**
     * Passed from ctxprobe's environment: exact names, and prefixes ending in {@code *}. The system basics (paths,
     * locale, temp folder, proxies), the accelerator stacks (CUDA and NVIDIA, ROCm and HIP, Intel oneAPI and Level
     * Zero, Kunlun XPU, Ascend), the Python and model-hub settings engines read, and the engines' own prefixes.
     */
    public static final List<String> ALLOWED = List.of(
            "PATH",
            "HOME",
            "USER",
            "LOGNAME",
            "SHELL",
            "LANG",
            "LANGUAGE",
            "LC_*",
            "TZ",
            "TERM",
            "TMPDIR",
            "XDG_*",
            "LD_LIBRARY_PATH",
            "LD_PRELOAD",
            "http_proxy",
            "https_proxy",
            "no_proxy",
            "HTTP_PROXY",
            "HTTPS_PROXY",
            "NO_PROXY",
            "SSL_CERT_FILE",
            "SSL_CERT_DIR",
            "REQUESTS_CA_BUNDLE",
            "CUDA_*",
            "NVIDIA_*",
            "NCCL_*",
            "CUDNN_*",
            "CUBLAS_*",
            "NV_*",
            "ROCM_*",
            "ROCR_*",
            "HIP_*",
            "HSA_*",
            "GPU_DEVICE_ORDINAL",
            "RCCL_*",
            "ZE_*",
            "ONEAPI_*",
            "SYCL_*",
            "ONEDNN_*",
            "CCL_*",
            "XPU_*",
            "XPURT_*",
            "BKCL_*",
            "KUNLUN_*",
            "ASCEND_*",
            "HF_*",
            "HUGGING_FACE_HUB_TOKEN",
            "TRANSFORMERS_*",
            "TOKENIZERS_*",
            "TORCH_*",
            "TORCHINDUCTOR_*",
            "PYTORCH_*",
            "TRITON_*",
            "VLLM_*",
            "SGLANG_*",
            "LMDEPLOY_*",
            "TRTLLM_*",
            "TLLM_*",
            "LLAMA_*",
            "GGML_*",
            "OMP_*",
            "MKL_*",
            "KMP_*",
            "OPENBLAS_*",
            "PYTHONPATH",
            "PYTHONHOME",
            "PYTHONUNBUFFERED",
            "VIRTUAL_ENV",
            "CONDA_*",
            "UV_*",
            "JAVA_HOME");

    private ServerEnvironment() {}

    /** Whether a variable of ctxprobe's environment reaches servers, by the allow-list or the extra patterns. */
    public static boolean passes(String name, List<String> extra) {
        return matches(name, ALLOWED) || matches(name, extra);
    }

    /**
     * A server's whole environment.
     *
     * @param own ctxprobe's environment
     * @param extra {@code pass_env}: more names or {@code PREFIX*} patterns to pass from {@code own}
     * @param experiment the experiment's {@code env} for this backend, on top
     * @param markValue the launch's mark, last so that nothing overrides it
     */
    static Map<String, String> of(
            Map<String, String> own, List<String> extra, Map<String, String> experiment, String markValue) {
        Map<String, String> env = new TreeMap<>();
        own.forEach((k, v) -> {
            if (passes(k, extra)) {
                env.put(k, v);
            }
        });
        env.putAll(experiment);
        env.put(LaunchProcesses.MARK_VARIABLE, markValue);
        return env;
    }

    private static boolean matches(String name, List<String> patterns) {
        for (String p : patterns) {
            if (p.endsWith("*") ? name.startsWith(p.substring(0, p.length() - 1)) : name.equals(p)) {
                return true;
            }
        }
        return false;
    }
}
