package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.regex.Pattern;

/**
 * Reads a server log for classification: its head (capacity lines come early) and its tail (the cause of an
 * exit comes last), bounded so that a chatty engine's gigabyte log costs little.
 */
public final class ServerLog {
    private static final int PART = 512 * 1024;

    private ServerLog() {}

    /** The log's lines; when it is large, the first and last 512 KiB with a marker line between. */
    public static List<String> lines(Path log) {
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long size = f.length();
            if (size <= 2L * PART) {
                byte[] all = new byte[(int) size];
                f.readFully(all);
                return split(new String(all, StandardCharsets.UTF_8));
            }
            byte[] head = new byte[PART];
            f.readFully(head);
            byte[] tail = new byte[PART];
            f.seek(size - PART);
            f.readFully(tail);
            List<String> out = new ArrayList<>(split(new String(head, StandardCharsets.UTF_8)));
            out.add("[... " + (size - 2L * PART) + " bytes of log left out ...]");
            out.addAll(split(new String(tail, StandardCharsets.UTF_8)));
            return out;
        } catch (IOException e) {
            return List.of("[the log " + log + " cannot be read: " + e.getMessage() + "]");
        }
    }

    /** How much of a log's end {@link #latestLine} reads: a progress bar's updates and the lines around them. */
    private static final int TAIL = 16 * 1024;

    private static final int SHOWN_CHARS = 240;
    private static final Pattern ANSI = Pattern.compile("\u001B\\[[0-9;?]*[A-Za-z]");
    // What engines put before their words: vLLM's worker tag and level/time/source, SGLang's time and rank,
    // uvicorn's level.
    private static final Pattern PREFIX = Pattern.compile("^(?:\\([^()]* pid=\\d+\\)\\s*)*"
            + "(?:(?:INFO|WARNING|WARN|DEBUG|ERROR)\\s+\\d\\d-\\d\\d \\d\\d:\\d\\d:\\d\\d(?:\\.\\d+)?\\s+"
            + "(?:\\[[^\\]]*\\]\\s*)?"
            + "|\\[\\d{4}-\\d\\d-\\d\\d[ T]\\d\\d:\\d\\d:\\d\\d[^\\]]*\\]\\s*"
            + "|(?:INFO|WARNING|WARN|DEBUG):?\\s+)?");
    // Lines that say nothing about progress: HTTP access logs (the readiness polls themselves), separators.
    private static final Pattern NOISE = Pattern.compile(
            "\"(?:GET|POST|HEAD|PUT|DELETE|OPTIONS) /\\S* HTTP/\\d(?:\\.\\d)?\"|log_server_r: request: |^[\\W_]*$");

    /**
     * The last line of the log that says what the server is doing, for a progress display: the latest update of a
     * progress bar (tqdm rewrites its line with carriage returns: "Loading safetensors checkpoint shards: 45%
     * Completed | 29/64"), else the latest line that is not an HTTP access log or blank, without the engine's time and
     * level prefix. Empty when the log is empty or cannot be read. Reads only the log's last 16 KiB.
     */
    public static Optional<String> latestLine(Path log) {
        String tail;
        try (RandomAccessFile f = new RandomAccessFile(log.toFile(), "r")) {
            long size = f.length();
            int n = (int) Math.min(size, TAIL);
            byte[] bytes = new byte[n];
            f.seek(size - n);
            f.readFully(bytes);
            tail = new String(bytes, StandardCharsets.UTF_8);
        } catch (IOException e) {
            return Optional.empty();
        }
        String[] lines = tail.split("\n", -1);
        // The first line may start mid-line: it is used only when nothing later says anything.
        for (int i = lines.length - 1; i >= 0; i--) {
            String[] updates = lines[i].split("\r");
            for (int j = updates.length - 1; j >= 0; j--) {
                String shown = meaningful(updates[j]);
                if (shown != null) {
                    return Optional.of(shown);
                }
            }
        }
        return Optional.empty();
    }

    private static String meaningful(String raw) {
        String line = ANSI.matcher(raw).replaceAll("").strip();
        if (line.isEmpty() || NOISE.matcher(line).find()) {
            return null;
        }
        line = PREFIX.matcher(line).replaceFirst("").strip();
        if (line.isEmpty()) {
            return null;
        }
        return line.length() <= SHOWN_CHARS ? line : line.substring(0, SHOWN_CHARS - 1) + "…";
    }

    private static List<String> split(String s) {
        return s.lines().map(l -> l.replace("\r", "")).toList();
    }
}
