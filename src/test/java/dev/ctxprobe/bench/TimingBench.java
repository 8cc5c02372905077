package dev.ctxprobe.bench;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Client timing error, side by side in one run: ctxprobe's client, the floor (a bare socket per stream,
 * {@link RawStreams}) and a reference client that follows the peers' method ({@code bench/reference_client.py},
 * aiohttp as SGLang's and vLLM's benchmarks), each pass a fresh process as users run it, against one
 * {@link StampingServer} in its own process. The passes alternate, in a rotating order, {@code --reps} times per
 * concurrency. A request's error is the client's stamp of its first token minus the server's stamp of writing it
 * (both CLOCK_MONOTONIC), matched by the request key in the prompt.
 */
final class TimingBench {

    /** Issue 17: ctxprobe's error at most 1.5x the floor's, and at most the reference's, p50 and p99. */
    static final double FLOOR_BAR = 1.5;

    static final double REFERENCE_BAR = 1.0;

    private static final long STREAM_PROMPT = 1_000;
    private static final double PREFILL_MS = 5;
    private static final double GAP_MS = 2;
    /**
     * Requests per pass at one stream: the reps together give 500, so that the p99 is the fifth-worst error and not,
     * as with the 100 of 20 a pass, the worst but one: one stall of the shared machine decided that bar.
     */
    private static final int SINGLE_STREAM_REQUESTS = 100;

    private static final String INSTALL_AIOHTTP =
            "apt-get install -y python3-aiohttp (Debian, Ubuntu) or pip install aiohttp";

    /**
     * The clients compared; {@code ctxprobe_warm} is ctxprobe's second pass in one JVM, {@code ctxprobe_java_jar} its
     * pass in a JVM started without the script's flags, as {@code java -jar target/ctxprobe.jar} starts it.
     */
    enum Client {
        CTXPROBE("ctxprobe"),
        CTXPROBE_JAR("ctxprobe_java_jar"),
        CTXPROBE_WARM("ctxprobe_warm"),
        FLOOR("floor"),
        REFERENCE("reference");

        final String label;

        Client(String label) {
            this.label = label;
        }
    }

    private TimingBench() {}

    static List<Figure> run(Bench.Options options) throws Exception {
        String python = referencePython();
        if (python == null) {
            System.err.println("bench: the reference client needs Python with aiohttp, found none; install it with "
                    + INSTALL_AIOHTTP + ". Skipping the reference column.");
        }
        List<Client> clients =
                new ArrayList<>(List.of(Client.CTXPROBE, Client.CTXPROBE_JAR, Client.FLOOR, Client.CTXPROBE_WARM));
        if (python != null) {
            clients.add(Client.REFERENCE);
        }
        List<Figure> figures = new ArrayList<>();
        try (Server server = new Server(options.events())) {
            Passes passes = new Passes(server, python, options.events());
            for (int streams : options.streams()) {
                int requests = streams == 1 ? SINGLE_STREAM_REQUESTS : streams;
                figures.addAll(compare(passes, clients, options.reps(), streams, requests, STREAM_PROMPT));
            }
            // Long prompts, one stream: where the peers' json.dumps inside the clock shows; no floor (it has no JSON).
            List<Client> promptClients =
                    python == null ? List.of(Client.CTXPROBE) : List.of(Client.CTXPROBE, Client.REFERENCE);
            for (long tokens : options.prompts()) {
                if (tokens != STREAM_PROMPT) {
                    figures.addAll(compare(passes, promptClients, 1, 1, options.reps(), tokens));
                }
            }
        }
        return figures;
    }

    /** {@code reps} rounds of one pass per client, the order rotating, pooled per client; then the ratios. */
    private static List<Figure> compare(
            Passes passes, List<Client> clients, int reps, int streams, int requests, long tokens) throws Exception {
        Map<Client, List<Double>> errors = new EnumMap<>(Client.class);
        Map<Client, List<Double>> sendMs = new EnumMap<>(Client.class);
        double loadMin = Double.POSITIVE_INFINITY;
        double loadMax = Double.NEGATIVE_INFINITY;
        for (int rep = 0; rep < reps; rep++) {
            for (int i = 0; i < clients.size(); i++) {
                Client client = clients.get((i + rep) % clients.size());
                double load = load1();
                loadMin = Math.min(loadMin, load);
                loadMax = Math.max(loadMax, load);
                List<Double> sends = new ArrayList<>();
                List<Double> got = passes.run(client, streams, requests, tokens, sends);
                errors.computeIfAbsent(client, c -> new ArrayList<>()).addAll(got);
                sendMs.computeIfAbsent(client, c -> new ArrayList<>()).addAll(sends);
                double[] sorted = array(got);
                Map<String, Number> spread = Figure.spread(sorted);
                System.err.printf(
                        Locale.ROOT,
                        "timing: streams=%d prompt=%s rep %d/%d %-13s p50=%.3f p99=%.3f ms load1=%.2f%n",
                        streams,
                        Bench.tokenLabel(tokens),
                        rep + 1,
                        reps,
                        client.label,
                        spread.get("p50").doubleValue(),
                        spread.get("p99").doubleValue(),
                        load);
            }
        }
        Map<String, Object> params = new LinkedHashMap<>();
        params.put("streams", streams);
        params.put("prompt_tokens", Bench.tokenLabel(tokens));
        params.put("reps", reps);
        params.put("load1", String.format(Locale.ROOT, "%.2f-%.2f", loadMin, loadMax));
        List<Figure> figures = new ArrayList<>();
        Map<Client, Map<String, Number>> spreads = new EnumMap<>(Client.class);
        for (Client client : clients) {
            Map<String, Number> spread = Figure.spread(array(errors.get(client)));
            spreads.put(client, spread);
            Map<String, Object> clientParams = new LinkedHashMap<>(params);
            clientParams.put("client", client.label);
            figures.add(Bench.emit(new Figure("timing", "ttft_error_ms", clientParams, spread, "ms", "", null)));
        }
        if (!sendMs.get(Client.CTXPROBE).isEmpty()) {
            figures.add(Bench.emit(new Figure(
                    "timing", "send_ms", params, Figure.spread(array(sendMs.get(Client.CTXPROBE))), "ms", "", null)));
        }
        if (spreads.containsKey(Client.FLOOR)) {
            figures.add(ratio(
                    "ratio_to_floor", params, spreads.get(Client.CTXPROBE), spreads.get(Client.FLOOR), FLOOR_BAR));
        }
        // ctxprobe started by the script, then as java -jar starts it: each against the same reference passes.
        Map<Client, String> toReference = new EnumMap<>(Client.class);
        toReference.put(Client.CTXPROBE, "ratio_to_reference");
        toReference.put(Client.CTXPROBE_JAR, "java_jar_ratio_to_reference");
        toReference.forEach((client, name) -> {
            if (spreads.containsKey(client) && spreads.containsKey(Client.REFERENCE)) {
                figures.add(ratio(name, params, spreads.get(client), spreads.get(Client.REFERENCE), REFERENCE_BAR));
            }
        });
        return figures;
    }

    /** ctxprobe's p50 and p99 over another client's, held to {@code bar} together. */
    private static Figure ratio(
            String name, Map<String, Object> params, Map<String, Number> ours, Map<String, Number> theirs, double bar) {
        Map<String, Number> values = new LinkedHashMap<>();
        double p50 = ours.get("p50").doubleValue() / theirs.get("p50").doubleValue();
        double p99 = ours.get("p99").doubleValue() / theirs.get("p99").doubleValue();
        values.put("p50", Figure.round(p50));
        values.put("p99", Figure.round(p99));
        boolean meets = p50 <= bar && p99 <= bar;
        String words = String.format(Locale.ROOT, "p50, p99 <= %.1f", bar);
        return Bench.emit(new Figure("timing", name, params, values, "x", words, meets));
    }

    /** A Python that imports aiohttp: the one on PATH, else Debian's (where python3-aiohttp installs). */
    private static String referencePython() {
        for (String python : List.of("python3", "/usr/bin/python3")) {
            try {
                Process p = new ProcessBuilder(python, "-c", "import aiohttp")
                        .redirectErrorStream(true)
                        .redirectOutput(ProcessBuilder.Redirect.DISCARD)
                        .start();
                if (p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0) {
                    return python;
                }
                p.destroyForcibly();
            } catch (IOException e) {
                // not installed under this name: try the next
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            }
        }
        return null;
    }

    /** Runs one client's pass as a fresh process and matches its stamps to the server's. */
    private record Passes(Server server, String python, int events) {

        List<Double> run(Client client, int streams, int requests, long tokens, List<Double> sendMs)
                throws IOException, InterruptedException {
            String url = server.baseUrl;
            String n = Integer.toString(requests);
            String s = Integer.toString(streams);
            String t = Long.toString(tokens);
            String e = Integer.toString(events);
            List<String> command = new ArrayList<>();
            int served = requests + 1; // every client sends one throwaway request first
            switch (client) {
                case CTXPROBE, CTXPROBE_WARM -> {
                    command.addAll(java());
                    int passes = client == Client.CTXPROBE
                            ? 1
                            : Integer.parseInt(System.getenv().getOrDefault("WARMP", "2"));
                    command.addAll(List.of(ClientPass.class.getName(), url, s, n, t, e, Integer.toString(passes)));
                    served *= passes;
                }
                case CTXPROBE_JAR -> {
                    command.addAll(List.of(javaBin(), "-cp", System.getProperty("java.class.path")));
                    command.addAll(List.of(ClientPass.class.getName(), url, s, n, t, e, "1"));
                }
                case FLOOR -> {
                    // Its streams are virtual threads that read their own sockets: ctxprobe's one carrier per two
                    // cores, made for its read loop, would queue them, so the floor keeps the JVM's default.
                    command.addAll(java());
                    command.addAll(List.of(RawStreams.class.getName(), url, s, n, t, e));
                }
                case REFERENCE ->
                    command.addAll(List.of(
                            python,
                            Path.of("bench", "reference_client.py").toString(),
                            url + "/v1/completions",
                            s,
                            n,
                            t,
                            e,
                            "1000",
                            "30000"));
            }
            Process process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            List<String> lines;
            try (BufferedReader out =
                    new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
                lines = out.lines().toList();
            }
            if (!process.waitFor(10, TimeUnit.MINUTES) || process.exitValue() != 0) {
                process.destroyForcibly();
                throw new IllegalStateException(client.label + " pass failed (" + String.join(" ", command) + ")");
            }
            Map<Long, Long> served0 = server.take(served);
            List<Double> errors = new ArrayList<>(lines.size());
            for (String line : lines) {
                String[] fields = line.strip().split(" ");
                Long stamp = served0.get(Long.parseLong(fields[0]));
                if (stamp == null) {
                    throw new IllegalStateException(
                            client.label + ": the server has no stamp for request " + fields[0]);
                }
                errors.add((Long.parseLong(fields[1]) - stamp) / 1e6);
                if (fields.length > 2) {
                    sendMs.add(Double.parseDouble(fields[2]));
                }
            }
            if (errors.size() != requests) {
                throw new IllegalStateException(client.label + " reported " + errors.size() + " of " + requests);
            }
            return errors;
        }
    }

    /**
     * A JVM started with the {@code ctxprobe} script's flags (its {@code opts}, read from the script so the two
     * cannot drift apart) and {@code CTXPROBE_JAVA_OPTS}, on the benchmark's class path. The script's AOT cache is
     * for its jar and does not apply here; it only shortens start-up, which no pass times.
     */
    static List<String> java() {
        List<String> command = new ArrayList<>();
        command.add(javaBin());
        command.addAll(SCRIPT_FLAGS);
        String opts = System.getenv("CTXPROBE_JAVA_OPTS");
        if (opts != null && !opts.isBlank()) {
            command.addAll(List.of(opts.strip().split("\\s+")));
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        return command;
    }

    private static String javaBin() {
        return ProcessHandle.current().info().command().orElse("java");
    }

    private static final List<String> SCRIPT_FLAGS = scriptFlags();

    private static List<String> scriptFlags() {
        try {
            // The line that sets opts, run by sh as the script runs it.
            Matcher m = Pattern.compile("(?ms)^opts=\"[^\"]*\"").matcher(Files.readString(Path.of("ctxprobe")));
            if (m.find()) {
                Process sh = new ProcessBuilder("sh", "-c", m.group() + "\nprintf '%s' \"$opts\"")
                        .redirectErrorStream(true)
                        .start();
                String opts = new String(sh.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
                if (sh.waitFor() == 0 && !opts.isBlank()) {
                    return List.of(opts.strip().split("\\s+"));
                }
            }
        } catch (IOException e) {
            // reported below
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        System.err.println("bench: could not evaluate opts=\"...\" of ./ctxprobe; the client passes run with the JVM's"
                + " defaults");
        return List.of("--enable-native-access=ALL-UNNAMED", "-Djava.awt.headless=true");
    }

    /** The stamping server's process and its command line. */
    private static final class Server implements AutoCloseable {
        private final Process process;
        private final BufferedReader out;
        private final Writer in;
        final String baseUrl;

        Server(int events) throws IOException {
            // Not the client's flags: with their small heap the server collected every few hundred ms, and a pause
            // between its stamp and its write was counted as the error of whichever client was being measured.
            // A young generation it does not fill in a run, touched up front, keeps its own pauses out.
            List<String> command = new ArrayList<>(List.of(
                    ProcessHandle.current().info().command().orElse("java"),
                    "-XX:+UseSerialGC",
                    "-Xms1g",
                    "-Xmx1g",
                    "-Xmn768m",
                    "-XX:+AlwaysPreTouch",
                    "-cp",
                    System.getProperty("java.class.path")));
            command.addAll(List.of(
                    StampingServer.class.getName(),
                    Integer.toString(events),
                    Double.toString(PREFILL_MS),
                    Double.toString(GAP_MS)));
            process = new ProcessBuilder(command)
                    .redirectError(ProcessBuilder.Redirect.INHERIT)
                    .start();
            out = new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8));
            in = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            baseUrl = out.readLine();
            if (baseUrl == null) {
                throw new IOException("the stamping server did not start");
            }
        }

        /** The first event's stamp of each request served since the last take, by key. */
        Map<Long, Long> take(int served) throws IOException {
            in.write("take " + served + "\n");
            in.flush();
            Map<Long, Long> stamps = new HashMap<>();
            String line;
            while ((line = out.readLine()) != null && !line.equals("end")) {
                String[] fields = line.split(" ");
                stamps.put(Long.parseLong(fields[0]), Long.parseLong(fields[1]));
            }
            return stamps;
        }

        @Override
        public void close() throws InterruptedException {
            try {
                in.close();
            } catch (IOException e) {
                // the server is ended below either way
            }
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
            }
        }
    }

    private static double load1() {
        try {
            return Double.parseDouble(Files.readString(Path.of("/proc/loadavg")).split(" ")[0]);
        } catch (IOException | RuntimeException e) {
            return Double.NaN;
        }
    }

    private static double[] array(List<Double> values) {
        return values.stream().mapToDouble(Double::doubleValue).toArray();
    }
}
