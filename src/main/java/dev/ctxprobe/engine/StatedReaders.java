package dev.ctxprobe.engine;

import dev.ctxprobe.results.ServedCapacity;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import tools.jackson.core.JacksonException;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Reads what an engine's endpoints state about its limits, from the bodies as they came: JSON documents and
 * Prometheus text. A body that is not what was expected states nothing; it never fails the step.
 */
public final class StatedReaders {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    /** {@code build_info} as current builds give it: {@code b11669-Debian}, {@code b4748-...}. */
    private static final Pattern LLAMA_BUILD = Pattern.compile("b(\\d{1,7})\\b");

    private static final Pattern LABEL = Pattern.compile("(\\w+)=\"((?:[^\"\\\\]|\\\\.)*)\"");

    private StatedReaders() {}

    /** llama.cpp's {@code GET /props}: the context of each slot and how many slots there are. */
    public static ServedCapacity llamaProps(String body) {
        JsonNode root = json(body);
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        b.context = positive(root.path("default_generation_settings").path("n_ctx"));
        b.slots = integer(root.path("total_slots"));
        Matcher build = LLAMA_BUILD.matcher(root.path("build_info").asString(""));
        b.build = build.lookingAt() ? Long.parseLong(build.group(1)) : null;
        return b.build("props");
    }

    /** llama.cpp's {@code GET /v1/models}: the model's training context and vocabulary, in {@code meta}. */
    public static ServedCapacity llamaModels(String body) {
        JsonNode meta = json(body).path("data").path(0).path("meta");
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        b.train = positive(meta.path("n_ctx_train"));
        b.vocab = integer(meta.path("n_vocab"));
        return b.build("models");
    }

    /**
     * Any OpenAI-compatible server's {@code GET /v1/models}: vLLM's {@code max_model_len} (the context it serves; {@code
     * ctxprobe serve} states it too) and llama-server's {@code meta} (the vocabulary, {@code n_ctx_train}), whichever
     * the server gives. llama-server's {@code meta.n_ctx} is not its limit: slots may split it.
     */
    public static ServedCapacity openaiModels(String body) {
        JsonNode model = json(body).path("data").path(0);
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        b.context = positive(model.path("max_model_len"));
        b.train = positive(model.path("meta").path("n_ctx_train"));
        b.vocab = integer(model.path("meta").path("n_vocab"));
        return b.build("models");
    }

    /** vLLM's {@code GET /v1/models}: the max_model_len it serves, the fitted one after {@code auto}. */
    public static ServedCapacity vllmModels(String body) {
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        b.context = positive(json(body).path("data").path(0).path("max_model_len"));
        return b.build("models");
    }

    /**
     * vLLM's {@code GET /metrics}: {@code vllm:cache_config_info}'s labels, {@code kv_cache_size_tokens} in newer
     * builds, else {@code num_gpu_blocks} times {@code block_size}, and {@code kv_cache_max_concurrency} where given.
     */
    public static ServedCapacity vllmMetrics(String body) {
        Map<String, String> labels = labels(body, "vllm:cache_config_info");
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        Long tokens = number(labels.get("kv_cache_size_tokens"));
        Long blocks = number(labels.get("num_gpu_blocks"));
        Long blockSize = number(labels.get("block_size"));
        b.kv = tokens != null ? tokens : blocks != null && blockSize != null ? blocks * blockSize : null;
        b.maxConcurrency = ratio(labels.get("kv_cache_max_concurrency"));
        return b.build("metrics");
    }

    /**
     * SGLang's {@code GET /get_server_info}: {@code max_req_input_len} (a prompt must be shorter) and {@code
     * max_total_num_tokens}, at the top level or in the first of {@code internal_states}.
     */
    public static ServedCapacity sglangServerInfo(String body) {
        JsonNode root = json(body);
        JsonNode state = root.path("internal_states").path(0);
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        Long maxInput = firstPositive(root.path("max_req_input_len"), state.path("max_req_input_len"));
        b.maxPrompt = maxInput == null ? null : maxInput - 1;
        b.kv = firstPositive(root.path("max_total_num_tokens"), state.path("max_total_num_tokens"));
        b.context = firstPositive(root.path("context_len"), root.path("context_length"), state.path("context_len"));
        return b.build("server_info");
    }

    /** SGLang's {@code GET /metrics} with {@code --enable-metrics}: its pool and context gauges. */
    public static ServedCapacity sglangMetrics(String body) {
        ServedCapacityBuilder b = new ServedCapacityBuilder();
        b.kv = gauge(body, "sglang:max_total_num_tokens");
        b.context = gauge(body, "sglang:context_len");
        return b.build("metrics");
    }

    private static JsonNode json(String body) {
        try {
            return JSON.readTree(body);
        } catch (JacksonException notJson) {
            return JSON.missingNode();
        }
    }

    private static Long firstPositive(JsonNode... nodes) {
        for (JsonNode n : nodes) {
            Long v = positive(n);
            if (v != null) {
                return v;
            }
        }
        return null;
    }

    private static Long positive(JsonNode n) {
        return n.isNumber() && n.asDouble() >= 1 && n.asDouble() < 1e18 ? n.asLong() : null;
    }

    private static Integer integer(JsonNode n) {
        Long v = positive(n);
        return v == null || v > Integer.MAX_VALUE ? null : v.intValue();
    }

    private static Long number(String text) {
        if (text == null) {
            return null;
        }
        try {
            double v = Double.parseDouble(text);
            return v >= 1 && v < 1e18 ? (long) v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** A positive ratio such as {@code 2.58203125}; null for anything else. */
    private static Double ratio(String text) {
        if (text == null) {
            return null;
        }
        try {
            double v = Double.parseDouble(text);
            return v > 0 && Double.isFinite(v) ? v : null;
        } catch (NumberFormatException e) {
            return null;
        }
    }

    /** The labels of the first sample of {@code metric}, empty when it is not there. */
    private static Map<String, String> labels(String body, String metric) {
        Map<String, String> labels = new LinkedHashMap<>();
        for (String line : body.split("\n")) {
            int end = line.lastIndexOf('}');
            if (line.startsWith(metric + "{") && end > metric.length()) {
                Matcher m = LABEL.matcher(line.substring(metric.length(), end + 1));
                while (m.find()) {
                    labels.put(m.group(1), m.group(2));
                }
                return labels;
            }
        }
        return labels;
    }

    /** The value of the first sample of {@code metric}, with or without labels. */
    private static Long gauge(String body, String metric) {
        for (String line : body.split("\n")) {
            if (line.startsWith(metric + "{") || line.startsWith(metric + " ")) {
                String value = line.substring(line.lastIndexOf(' ') + 1).strip();
                return number(value);
            }
        }
        return null;
    }
}
