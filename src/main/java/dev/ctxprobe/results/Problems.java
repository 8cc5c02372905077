package dev.ctxprobe.results;

import java.util.ArrayList;
import java.util.List;

/** What is wrong with one results file, one {@code file: path: what is wrong} line per problem. */
final class Problems {
    private final String file;
    private final List<String> lines = new ArrayList<>();

    Problems(String file) {
        this.file = file;
    }

    /** A problem at a key path such as {@code scenarios[3].target_len}; an empty path is the whole file. */
    void add(String path, String what) {
        lines.add(path.isEmpty() ? file + ": " + what : file + ": " + path + ": " + what);
    }

    boolean any() {
        return !lines.isEmpty();
    }

    ResultFiles.ResultFileException exception() {
        return new ResultFiles.ResultFileException(lines);
    }
}
