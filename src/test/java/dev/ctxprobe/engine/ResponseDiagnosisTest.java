package dev.ctxprobe.engine;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.engines.Engines;
import dev.ctxprobe.results.FailureClass;
import java.util.stream.Stream;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

class ResponseDiagnosisTest {

    static Stream<Arguments> answers() {
        return Stream.of(
                Arguments.of(
                        "sglang",
                        400,
                        "{\"object\":\"error\",\"message\":\"Input length (70000 tokens) exceeds the maximum allowed"
                                + " length (65534 tokens). Use a shorter input or enable --allow-auto-truncate.\","
                                + "\"type\":\"BadRequestError\",\"param\":null,\"code\":400}",
                        FailureClass.REQUEST_REJECTED,
                        65_534L,
                        "HTTP 400: the server rejected the prompt as too long (the longest prompt it takes is 65,533 tokens):"
                                + " Input length"),
                Arguments.of(
                        "sglang",
                        200,
                        "data: {\"error\": {\"message\": \"The input (1,050,000 tokens) is longer than the model's"
                                + " context length (1,048,576 tokens).\", \"code\": 400}}",
                        FailureClass.REQUEST_REJECTED,
                        1_048_576L,
                        "error event in a 200 stream: the server rejected the prompt as too long (the longest prompt it takes"
                                + " is 1,048,575"),
                Arguments.of(
                        "sglang-kunlun",
                        200,
                        "{\"error\": \"Input length (70000 tokens) exceeds the maximum allowed length (65534 tokens).\"}",
                        FailureClass.REQUEST_REJECTED,
                        65_534L,
                        "): Input length (70000 tokens)"),
                Arguments.of(
                        "vllm",
                        400,
                        "{\"object\":\"error\",\"message\":\"This model's maximum context length is 4096 tokens."
                                + " However, you requested 5000 tokens (4999 in the messages, 1 in the completion)."
                                + " Please reduce the length of the messages or completion.\",\"type\":"
                                + "\"BadRequestError\",\"param\":null,\"code\":400}",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "(limit 4,096 tokens): This model's maximum context length is 4096 tokens."),
                Arguments.of(
                        "vllm",
                        400,
                        "{\"error\":{\"message\":\"The decoder prompt (length 5000) is longer than the maximum model"
                                + " length of 4,096. Make sure that `max_model_len` is no smaller than the number of"
                                + " text tokens.\",\"type\":\"BadRequestError\",\"param\":null,\"code\":400}}",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "The decoder prompt (length 5000)"),
                Arguments.of(
                        "vllm",
                        400,
                        "{\"error\":{\"message\":\"'max_tokens' or 'max_completion_tokens' is too large: 1. This"
                                + " model's maximum context length is 4096 tokens and your request has 4096 input"
                                + " tokens (1 > 4096 - 4096).\",\"type\":\"BadRequestError\",\"code\":400}}",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "limit 4,096 tokens"),
                Arguments.of(
                        "openai",
                        400,
                        "{\"error\":{\"message\":\"Input length (5000) exceeds model's maximum context length"
                                + " (4096).\",\"code\":400}}",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "limit 4,096 tokens"),
                Arguments.of(
                        "vllm",
                        429,
                        "{\"error\":{\"message\":\"Request exceeds the rate limit, retry later\",\"code\":429}}",
                        FailureClass.HTTP_ERROR,
                        null,
                        "HTTP 429 from the server: Request exceeds the rate limit"),
                Arguments.of(
                        "vllm",
                        400,
                        "THIS MODEL'S MAXIMUM CONTEXT LENGTH IS 4,096 TOKENS.",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "limit 4,096 tokens"),
                Arguments.of(
                        "llamacpp",
                        400,
                        "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size, try"
                                + " increasing it\",\"type\":\"exceed_context_size_error\",\"n_prompt_tokens\":41000,"
                                + "\"n_ctx\":40960}}",
                        FailureClass.REQUEST_REJECTED,
                        40_960L,
                        "(the longest prompt it takes is 40,959 tokens): the request exceeds the available context size"),
                Arguments.of(
                        "trtllm",
                        400,
                        "{\"object\":\"error\",\"message\":\"The sum of prompt length (1000000) and query length (0)"
                                + " should not exceed max_num_tokens (8192)\",\"type\":\"BadRequestError\","
                                + "\"param\":null,\"code\":400}",
                        FailureClass.REQUEST_REJECTED,
                        8_192L,
                        "limit 8,192 tokens"),
                Arguments.of(
                        "tgi",
                        422,
                        "{\"error\":\"Input validation error: `inputs` tokens + `max_new_tokens` must be <= 4096."
                                + " Given: 4096 `inputs` tokens and 1 `max_new_tokens`\",\"error_type\":\"validation\"}",
                        FailureClass.REQUEST_REJECTED,
                        4_096L,
                        "HTTP 422: the server rejected the prompt as too long (the longest prompt it takes is 4,095 tokens)"),
                Arguments.of(
                        "tgi",
                        200,
                        "data:{\"error\":\"Input validation error: `inputs` must have less than 4095 tokens."
                                + " Given: 5000\",\"error_type\":\"validation\"}",
                        FailureClass.REQUEST_REJECTED,
                        4_095L,
                        "the longest prompt it takes is 4,094 tokens"),
                Arguments.of(
                        "embedded",
                        400,
                        "{\"error\":{\"message\":\"This model's maximum context length is 40192 tokens. However,"
                                + " you requested 65793 tokens (65792 in the prompt, 1 in the completion): with"
                                + " max_tokens 1 a prompt can have at most 40191 tokens.\",\"type\":\"BadRequestError\","
                                + "\"param\":\"prompt\",\"code\":400}}",
                        FailureClass.REQUEST_REJECTED,
                        40_192L,
                        "(limit 40,192 tokens): This model's maximum context length is 40192 tokens"),
                Arguments.of(
                        "openai",
                        400,
                        "{\"object\":\"error\",\"message\":\"Input length (70000 tokens) exceeds the maximum allowed"
                                + " length (65534 tokens).\"}",
                        FailureClass.REQUEST_REJECTED,
                        65_534L,
                        "the longest prompt it takes is 65,533 tokens"),
                Arguments.of(
                        "lmdeploy",
                        400,
                        "{\"object\":\"error\",\"message\":\"Input is too long for this model\",\"code\":400}",
                        FailureClass.REQUEST_REJECTED,
                        null,
                        "HTTP 400: the server rejected the prompt as too long: Input is too long for this model"),
                Arguments.of(
                        "vllm",
                        400,
                        "{\"error\":{\"message\":\"temperature must be non-negative\",\"code\":400}}",
                        FailureClass.HTTP_ERROR,
                        null,
                        "HTTP 400 from the server: temperature must be non-negative"),
                Arguments.of(
                        "sglang",
                        500,
                        "Internal Server Error",
                        FailureClass.HTTP_ERROR,
                        null,
                        "HTTP 500 from the server: Internal Server Error"),
                Arguments.of(
                        "vllm",
                        503,
                        "{\"message\":\"This model's maximum context length is 4096 tokens.\"}",
                        FailureClass.HTTP_ERROR,
                        4_096L,
                        "HTTP 503 from the server"),
                Arguments.of(
                        "sglang",
                        200,
                        "{\"error\": {\"message\": \"Scheduler died\"}}",
                        FailureClass.HTTP_ERROR,
                        null,
                        "error event in a 200 stream from the server: Scheduler died"),
                Arguments.of("tgi", 404, "", FailureClass.HTTP_ERROR, null, "HTTP 404 from the server: empty body"));
    }

    @ParameterizedTest(name = "{0} HTTP {1}: {3}")
    @MethodSource("answers")
    void classifiesAFailedRequest(
            String engine, int status, String body, FailureClass expected, Long hint, String detailPart) {
        Diagnosis d = Engines.profile(engine).diagnoseResponse(status, body);
        assertThat(d.failureClass()).isEqualTo(expected);
        assertThat(d.named().maxContextHint()).isEqualTo(hint);
        assertThat(d.named().kvCapacityTokens()).isNull();
        assertThat(d.detail()).contains(detailPart).doesNotContain("\n");
        assertThat(d.evidence()).first().asString().contains(String.valueOf(status));
        assertThat(d.evidence()).hasSizeLessThanOrEqualTo(Diagnosis.MAX_EVIDENCE_LINES);
    }
}
