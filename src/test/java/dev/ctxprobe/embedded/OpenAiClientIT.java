package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.testsupport.Required;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/**
 * {@code ctxprobe serve} driven by the official {@code openai} npm package, the client most users' code uses: it
 * parses the model list, the completions (token ids, text, a stream with usage) and, from vLLM's error shape, the
 * status, type and param of each refusal. The package is installed once per build into {@code target/}; without
 * node and npm (or without the registry) the test skips, unless CI requires {@code node}.
 */
class OpenAiClientIT {
    /** Pinned: a newer major may change how errors are read, and a test must not change under a build. */
    private static final String PACKAGE = "openai@6.49.0";

    private static final Path CLIENT_DIR = Path.of("target", "openai-client").toAbsolutePath();
    private static final JsonMapper JSON = JsonMapper.builder().build();

    @TempDir
    static Path logs;

    private static ServeProcess server;

    @BeforeAll
    static void installClientAndStartServer() throws Exception {
        Required.assumePresent("node", onPath("node") && onPath("npm"), "node and npm run the openai npm package");
        String installed = install();
        Required.assumePresent("node", installed == null, "npm could not install " + PACKAGE + ": " + installed);
        server = ServeProcess.start(logs, "--port", "0", "--ctx-size", "4096", "--kv-memory", "8MiB", "--threads", "2");
        server.awaitReady();
    }

    @AfterAll
    static void stopServer() throws InterruptedException {
        if (server != null) {
            server.close();
        }
    }

    private static boolean onPath(String program) {
        return Stream.of(System.getenv().getOrDefault("PATH", "").split(":"))
                .anyMatch(d -> Files.isExecutable(Path.of(d.isEmpty() ? "." : d, program)));
    }

    /** Installs the package unless an earlier test run of this build did; null when it is there, else npm's words. */
    private static String install() throws IOException, InterruptedException {
        if (Files.isRegularFile(CLIENT_DIR.resolve("node_modules/openai/package.json"))) {
            return null;
        }
        Files.createDirectories(CLIENT_DIR);
        Files.writeString(CLIENT_DIR.resolve("package.json"), "{\"private\": true}\n");
        Process npm = new ProcessBuilder("npm", "install", "--no-audit", "--no-fund", "--loglevel=error", PACKAGE)
                .directory(CLIENT_DIR.toFile())
                .redirectErrorStream(true)
                .start();
        String said = new String(npm.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        if (!npm.waitFor(180, TimeUnit.SECONDS) || npm.exitValue() != 0) {
            npm.destroyForcibly();
            return said.isBlank() ? "npm exited with " + npm.exitValue() : said.strip();
        }
        return null;
    }

    /** Runs the client script against the server and returns what it saw. */
    private static JsonNode clientSaw() throws Exception {
        Path script = CLIENT_DIR.resolve("openai-client.mjs");
        try (InputStream in = OpenAiClientIT.class.getResourceAsStream("openai-client.mjs")) {
            Files.copy(in, script, StandardCopyOption.REPLACE_EXISTING);
        }
        int port = server.awaitReady();
        ProcessBuilder pb = new ProcessBuilder("node", script.toString()).directory(CLIENT_DIR.toFile());
        pb.environment().put("BASE", "http://127.0.0.1:" + port);
        Process node = pb.redirectErrorStream(true).start();
        String said = new String(node.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertThat(node.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(node.exitValue()).as(said).isZero();
        List<String> lines = said.lines().toList();
        return JSON.readTree(lines.getLast());
    }

    @Test
    void theOfficialClientReadsEveryAnswerAndEveryRefusal() throws Exception {
        JsonNode saw = clientSaw();

        assertThat(saw.get("models"))
                .isEqualTo(JSON.readTree("[{\"id\":\"ctxprobe-micro\",\"object\":\"model\",\"created\":\"number\","
                        + "\"owned_by\":\"ctxprobe\"}]"));
        assertThat(saw.get("retrieved").asString()).isEqualTo("ctxprobe-micro");
        assertThat(saw.get("ids"))
                .isEqualTo(
                        JSON.readTree(
                                "{\"usage\":{\"prompt_tokens\":1000,\"total_tokens\":1004,"
                                        + "\"completion_tokens\":4},\"choices\":1,\"finish\":\"length\",\"object\":\"text_completion\"}"));
        assertThat(saw.get("text").get("usage").get("prompt_tokens").asInt()).isEqualTo(5);
        assertThat(saw.get("stream"))
                .isEqualTo(JSON.readTree("{\"events\":3,\"usage\":{\"prompt_tokens\":3,\"total_tokens\":6,"
                        + "\"completion_tokens\":3}}"));

        assertThat(saw.get("unknownModel"))
                .isEqualTo(JSON.readTree("{\"status\":404,\"kind\":\"NotFoundError\",\"message\":\"404 The model"
                        + " `gpt-4` does not exist.\",\"type\":\"NotFoundError\",\"param\":\"model\",\"code\":404}"));
        assertThat(saw.get("tooLong").get("kind").asString()).isEqualTo("BadRequestError");
        assertThat(saw.get("tooLong").get("message").asString())
                .isEqualTo("400 This model's maximum context length is 4096 tokens. However, you requested 4097"
                        + " tokens (4096 in the prompt, 1 in the completion): with max_tokens 1 a prompt can have at"
                        + " most 4095 tokens.");
        assertThat(saw.get("tooLong").get("param").asString()).isEqualTo("prompt");
        assertThat(saw.get("severalChoices").get("param").asString()).isEqualTo("n");
        assertThat(saw.get("batch").get("message").asString())
                .isEqualTo("400 a batch of 2 prompts is not served here: send one prompt per request");
        assertThat(saw.get("unknownPath").get("kind").asString()).isEqualTo("NotFoundError");
        assertThat(saw.get("unknownPath").get("type").asString()).isEqualTo("NotFoundError");
    }
}
