package dev.ctxprobe.launch;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

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

    private static List<String> split(String s) {
        return s.lines().map(l -> l.replace("\r", "")).toList();
    }
}
