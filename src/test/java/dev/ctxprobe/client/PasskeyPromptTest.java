package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * Pass-key prompts made of a real server's {@code /tokenize} answers: a loopback server with a byte tokenizer in
 * vLLM's shape ({@code prompt}) and llama.cpp's ({@code content}).
 */
class PasskeyPromptTest {
    private static final JsonMapper JSON = JsonMapper.builder().build();
    private HttpServer server;
    private final List<String> asked = new java.util.concurrent.CopyOnWriteArrayList<>();

    @BeforeEach
    void start() throws IOException {
        server = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 0);
        server.createContext("/tokenize", ex -> {
            JsonNode body = JSON.readTree(ex.getRequestBody().readAllBytes());
            asked.add(body.toString());
            boolean vllm = body.has("prompt");
            String text = body.path(vllm ? "prompt" : "content").asString();
            boolean special =
                    body.path(vllm ? "add_special_tokens" : "add_special").asBoolean();
            List<Integer> ids = new ArrayList<>();
            if (special) {
                ids.add(1);
            }
            for (byte b : text.getBytes(StandardCharsets.UTF_8)) {
                ids.add((b & 0xff) + 3);
            }
            byte[] out = JSON.writeValueAsBytes(java.util.Map.of("tokens", ids));
            ex.sendResponseHeaders(200, out.length);
            ex.getResponseBody().write(out);
            ex.close();
        });
        server.start();
    }

    @AfterEach
    void stop() {
        server.stop(0);
    }

    private ServerTokenizer tokenizer(ServerTokenizer.Api api) {
        return new ServerTokenizer(
                "http://127.0.0.1:" + server.getAddress().getPort(), "m", null, api, Duration.ofSeconds(5));
    }

    private static String text(int[] ids) {
        StringBuilder s = new StringBuilder();
        for (int id : ids) {
            s.append(id >= 3 ? (char) (id - 3) : '^');
        }
        return s.toString();
    }

    @Test
    void eachPromptIsExactlyTheTargetWithItsKeyAtItsDepthAndTheQuestionLast() throws IOException {
        ServerTokenizer t = tokenizer(ServerTokenizer.Api.PROMPT);
        PasskeyPrompt p = PasskeyPrompt.prepare(t, null, 5_000, 3, new double[] {0, 0.5, 1}, 42);
        assertThat(asked.getFirst()).contains("\"model\":\"m\"").contains("\"prompt\"");
        for (int i = 0; i < 3; i++) {
            int[] ids = p.ids(i);
            assertThat(ids).hasSize(5_000);
            assertThat(ids[0]).as("the opening starts as a prompt does").isEqualTo(1);
            String text = text(ids);
            String needle = "The pass key is " + p.needle(i).key() + ". Remember it.";
            assertThat(text).contains(needle).endsWith("What is the pass key? The pass key is");
            double at = text.indexOf(needle) / 5_000.0;
            assertThat(at).isCloseTo(new double[] {0.02, 0.5, 0.97}[i], org.assertj.core.data.Offset.offset(0.04));
        }
        assertThat(text(p.ids(0))).isNotEqualTo(text(p.ids(1)).substring(0, 40));
        assertThat(p.needle(0).key()).hasSize(5);
    }

    /**
     * Where each depth puts the key, to the token: {@code round(depth * filler)} filler ids after the opening, the
     * needle whole, the filler flowing on after it, the question last; of two targets one makes the filler's length
     * odd, so that the middle's rounding shows.
     */
    @Test
    void eachDepthPutsTheKeyAtItsTokenExactPosition() throws IOException {
        ServerTokenizer t = tokenizer(ServerTokenizer.Api.CONTENT);
        double[] depths = {0.1, 0.5, 0.9};
        for (long target : new long[] {10_000, 10_001}) {
            PasskeyPrompt p = PasskeyPrompt.prepare(t, null, target, depths.length, depths, 11);
            int[] filler = p.pieces().filler();
            int[] cue = p.pieces().cue();
            for (int i = 0; i < depths.length; i++) {
                PasskeyPrompt.Needle n = p.needle(i);
                int[] ids = p.ids(i);
                long fill = target - n.opening().length - n.needle().length - cue.length;
                int before = (int) Math.round(depths[i] * fill);
                int at = n.opening().length + before;
                String where = "depth " + depths[i] + " at " + target;
                assertThat(ids).as(where).hasSize((int) target);
                assertThat(java.util.Arrays.copyOfRange(ids, 0, n.opening().length))
                        .as(where)
                        .isEqualTo(n.opening());
                assertThat(java.util.Arrays.copyOfRange(ids, at, at + n.needle().length))
                        .as(where + ": the needle starts " + before + " filler ids after the opening")
                        .isEqualTo(n.needle());
                assertThat(text(ids).indexOf("The pass key is " + n.key()))
                        .as(where + ": the first needle in the text is this one, at its place")
                        .isEqualTo(at + 1);
                assertThat(ids[at - 1]).as(where).isEqualTo(filler[(before - 1) % filler.length]);
                assertThat(ids[at + n.needle().length])
                        .as(where + ": the filler flows on across the needle")
                        .isEqualTo(filler[before % filler.length]);
                assertThat(java.util.Arrays.copyOfRange(ids, (int) target - cue.length, (int) target))
                        .as(where)
                        .isEqualTo(cue);
            }
            assertThat(p.needle(1).depth()).isEqualTo(0.5);
        }
    }

    @Test
    void aRequestCostsOneTokenizeCallAndTheControlNone() throws IOException {
        ServerTokenizer t = tokenizer(ServerTokenizer.Api.PROMPT);
        PasskeyPrompt first = PasskeyPrompt.prepare(t, null, 2_000, 5, new double[] {0.5}, 8);
        assertThat(asked)
                .as("the opening, the filler and the cue, once a backend, and a needle a request")
                .hasSize(8);
        PasskeyPrompt.Pieces pieces = first.pieces();
        asked.clear();
        PasskeyPrompt p = PasskeyPrompt.prepare(t, pieces, 3_000, 40, new double[] {0.5}, 9);
        assertThat(asked).as("one needle a request").hasSize(40);
        asked.clear();
        PasskeyPrompt other = PasskeyPrompt.prepare(t, pieces, 3_000, 2, new double[] {0.5}, 10);
        assertThat(asked).hasSize(2);
        asked.clear();
        PasskeyPrompt control = p.control(1_024);
        assertThat(asked).as("the control reuses a needle").isEmpty();

        // Every opening differs from every other before the filler starts, this step's, the next's and the
        // control's: a prefix cache has nothing to reuse.
        java.util.Set<String> openings = new java.util.HashSet<>();
        for (int i = 0; i < p.count(); i++) {
            openings.add(java.util.Arrays.toString(p.needle(i).opening()));
            assertThat(p.ids(i)).hasSize(3_000);
        }
        openings.add(java.util.Arrays.toString(other.needle(0).opening()));
        openings.add(java.util.Arrays.toString(other.needle(1).opening()));
        openings.add(java.util.Arrays.toString(control.needle(0).opening()));
        assertThat(openings).hasSize(43);
        assertThat(java.util.stream.IntStream.range(0, p.count())
                        .mapToObj(i -> p.needle(i).key())
                        .distinct()
                        .count())
                .as("a fresh key a request")
                .isGreaterThan(35);

        int[] ids = control.ids(0);
        assertThat(ids).hasSize(1_024);
        String text = text(ids);
        assertThat(text)
                .startsWith("^A pass key is hidden in the text below. Find it and remember it. Document")
                .contains("The pass key is " + p.needle(0).key() + ". Remember it.")
                .endsWith("What is the pass key? The pass key is");
        assertThat(control.needle(0).depth()).isZero();
    }

    @Test
    void needlesTokenizedAheadCostTheNextStepNoCall() throws IOException {
        ServerTokenizer t = tokenizer(ServerTokenizer.Api.CONTENT);
        PasskeyPrompt.Pieces pieces =
                PasskeyPrompt.prepare(t, null, 1_000, 1, new double[] {0.5}, 1).pieces();
        asked.clear();
        List<PasskeyPrompt.Tokenized> ahead = PasskeyPrompt.tokenize(t, 2, 2);
        assertThat(asked).as("a call a needle, on the warm server").hasSize(2);
        assertThat(ahead.get(0).key()).isNotEqualTo(ahead.get(1).key());
        asked.clear();

        PasskeyPrompt p = PasskeyPrompt.prepare(t, pieces, ahead, 3_000, 2, new double[] {0.5}, 3);
        assertThat(asked).as("the next step asks nothing").isEmpty();
        for (int i = 0; i < 2; i++) {
            assertThat(p.needle(i).key()).isEqualTo(ahead.get(i).key());
            assertThat(p.ids(i)).hasSize(3_000);
            assertThat(text(p.ids(i)))
                    .contains("The pass key is " + ahead.get(i).key() + ". Remember it.");
        }

        PasskeyPrompt more = PasskeyPrompt.prepare(t, pieces, ahead.subList(0, 1), 3_000, 3, new double[] {0.5}, 4);
        assertThat(asked).as("only the needles not tokenized ahead").hasSize(2);
        assertThat(more.needle(0).key()).isEqualTo(ahead.get(0).key());
        for (int i = 0; i < 3; i++) {
            assertThat(text(more.ids(i)))
                    .contains("The pass key is " + more.needle(i).key() + ". Remember it.");
        }
    }

    @Test
    void llamaCppIsAskedForContent() throws IOException {
        ServerTokenizer t = tokenizer(ServerTokenizer.Api.CONTENT);
        PasskeyPrompt p = PasskeyPrompt.prepare(t, null, 400, 1, new double[] {0.5}, 7);
        assertThat(asked.getFirst()).contains("\"content\"").doesNotContain("\"prompt\"");
        assertThat(p.ids(0)).hasSize(400);
        assertThat(p.fixedTokens()).isLessThan(400);
    }

    @Test
    void theAnswerIsTheFirstNumberOfTheOutput() {
        assertThat(PasskeyPrompt.answered(" 48213. Remember it.")).isEqualTo("48213");
        assertThat(PasskeyPrompt.answered(" I do not know.")).isNull();
        assertThat(PasskeyPrompt.answered(null)).isNull();
    }

    @Test
    void aServerWithoutTokenizeSaysWhatItAnswered() {
        ServerTokenizer none = new ServerTokenizer(
                "http://127.0.0.1:" + server.getAddress().getPort() + "/nothing",
                "m",
                null,
                ServerTokenizer.Api.PROMPT,
                Duration.ofSeconds(5));
        org.assertj.core.api.Assertions.assertThatThrownBy(() -> none.ids("x", false))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("answered 404");
    }

    @Test
    void theBodyOfIdsIsTheSameJsonAsTheRandomOne() {
        String body = new String(TokenPrompts.body("m", new int[] {5, 17, 300}, 8), StandardCharsets.US_ASCII);
        JsonNode json = JSON.readTree(body);
        assertThat(json.get("prompt")).extracting(JsonNode::asInt).containsExactly(5, 17, 300);
        assertThat(json.get("max_tokens").asInt()).isEqualTo(8);
        assertThat(json.get("temperature").asInt()).isZero();
    }
}
