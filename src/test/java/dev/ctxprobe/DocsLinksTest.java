package dev.ctxprobe;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The repository must stand alone for a user who clones it: every relative link of the user documentation
 * resolves to a file (and a {@code #anchor} to a heading), and nothing points at material outside the repository.
 */
class DocsLinksTest {

    /** Files whose relative links are checked, besides every {@code docs/*.md}. */
    private static final List<Path> TOP_LEVEL_DOCS = List.of(Path.of("README.md"), Path.of("BENCHMARKS.md"));

    /** Where a reference to outside material must not appear. */
    private static final List<Path> SCANNED = List.of(
            Path.of("README.md"),
            Path.of("BENCHMARKS.md"),
            Path.of("docs"),
            Path.of("src"),
            Path.of("bench"),
            Path.of(".ci"),
            Path.of("experiments"));

    // Built from parts so that this file does not contain what it looks for.
    private static final List<String> FORBIDDEN = List.of(".." + "/shared", "shared" + "/spec", "/work" + "/shared");

    private static final Pattern LINK =
            Pattern.compile("!?\\[[^\\]]*]\\(\\s*<?([^)\\s>]+)>?(?:\\s+\"[^\"]*\")?\\s*\\)");
    private static final Pattern HEADING = Pattern.compile("^ {0,3}#{1,6}\\s+(.*?)(?:\\s+#+)?\\s*$");
    private static final Pattern FENCE = Pattern.compile("^ {0,3}(```|~~~)");
    private static final Pattern INLINE_CODE = Pattern.compile("`+[^`]*`+");
    private static final Pattern SCHEME = Pattern.compile("^[A-Za-z][A-Za-z0-9+.-]*:");

    @Test
    void everyRelativeLinkResolvesToAFileAndEveryAnchorToAHeading() throws IOException {
        List<Path> files = documentation();
        assertThat(files).contains(Path.of("docs", "README.md"));
        List<String> broken = new ArrayList<>();
        for (Path file : files) {
            broken.addAll(brokenLinks(file));
        }
        assertThat(broken).as("broken links").isEmpty();
    }

    @Test
    void theReadmeLeadsToTheDocsAndTheDocsIndexListsEveryPage() throws IOException {
        assertThat(links(Path.of("README.md"))).contains("docs/README.md");
        Set<String> indexed = links(Path.of("docs", "README.md"));
        try (Stream<Path> pages = Files.list(Path.of("docs"))) {
            List<String> unlisted = pages.map(p -> p.getFileName().toString())
                    .filter(n -> n.endsWith(".md") && !n.equals("README.md"))
                    .filter(n -> !indexed.contains(n))
                    .toList();
            assertThat(unlisted).as("docs pages missing from docs/README.md").isEmpty();
        }
    }

    @Test
    void nothingReferencesMaterialOutsideTheRepository() throws IOException {
        List<String> hits = new ArrayList<>();
        for (Path root : SCANNED) {
            if (!Files.exists(root)) {
                continue;
            }
            try (Stream<Path> all = Files.walk(root)) {
                for (Path file : all.filter(Files::isRegularFile).sorted().toList()) {
                    byte[] bytes = Files.readAllBytes(file);
                    if (isBinary(bytes)) {
                        continue;
                    }
                    List<String> lines =
                            new String(bytes, StandardCharsets.UTF_8).lines().toList();
                    for (int i = 0; i < lines.size(); i++) {
                        for (String bad : FORBIDDEN) {
                            if (lines.get(i).contains(bad)) {
                                hits.add(file + ":" + (i + 1) + ": mentions " + bad);
                            }
                        }
                    }
                }
            }
        }
        assertThat(hits).as("references to material outside the repository").isEmpty();
    }

    @Test
    void theCheckerReportsABrokenFileABrokenAnchorAndNothingElse(@TempDir Path dir) throws IOException {
        Files.writeString(dir.resolve("other.md"), "# Other page\n\n## `max_launches` and more: details\n");
        Files.writeString(
                dir.resolve("page.md"),
                String.join(
                        "\n",
                        "# Page",
                        "## Results.json at a glance",
                        "## Results.json at a glance",
                        "Good: [a](other.md), [b](other.md#max_launches-and-more-details), [c](#page),",
                        "[d](#resultsjson-at-a-glance-1), [e](https://example.org/x.md), ![f](other.md \"title\").",
                        "Ignored: `[g](missing-in-code.md)`.",
                        "```",
                        "[h](missing-in-fence.md)",
                        "# not a heading",
                        "```",
                        "Broken: [i](missing.md), [j](other.md#no-such-heading), [k](#not-a-heading).",
                        ""));
        assertThat(brokenLinks(dir.resolve("page.md")))
                .containsExactly(
                        dir.resolve("page.md") + ":11: missing.md: no such file",
                        dir.resolve("page.md") + ":11: other.md#no-such-heading: no heading 'no-such-heading' in "
                                + dir.resolve("other.md"),
                        dir.resolve("page.md") + ":11: #not-a-heading: no heading 'not-a-heading' in "
                                + dir.resolve("page.md"));
    }

    private static List<Path> documentation() throws IOException {
        List<Path> files = new ArrayList<>(TOP_LEVEL_DOCS);
        try (Stream<Path> docs = Files.list(Path.of("docs"))) {
            docs.filter(p -> p.toString().endsWith(".md")).sorted().forEach(files::add);
        }
        return files;
    }

    /** Every link target of a Markdown file outside code, as written. */
    private static Set<String> links(Path file) throws IOException {
        Set<String> targets = new LinkedHashSet<>();
        for (String line : prose(file)) {
            Matcher m = LINK.matcher(line);
            while (m.find()) {
                targets.add(m.group(1));
            }
        }
        return targets;
    }

    /** {@code file:line: target: why} for each relative link of {@code file} that does not resolve. */
    static List<String> brokenLinks(Path file) throws IOException {
        List<String> broken = new ArrayList<>();
        List<String> lines = prose(file);
        for (int i = 0; i < lines.size(); i++) {
            Matcher m = LINK.matcher(lines.get(i));
            while (m.find()) {
                String target = m.group(1);
                if (SCHEME.matcher(target).find()) {
                    continue;
                }
                String problem = problem(file, target);
                if (problem != null) {
                    broken.add(file + ":" + (i + 1) + ": " + target + ": " + problem);
                }
            }
        }
        return broken;
    }

    private static String problem(Path from, String target) throws IOException {
        int hash = target.indexOf('#');
        String path = hash < 0 ? target : target.substring(0, hash);
        String anchor = hash < 0 ? null : target.substring(hash + 1);
        Path resolved = path.isEmpty()
                ? from
                : from.toAbsolutePath().getParent().resolve(path).normalize();
        if (!Files.exists(resolved)) {
            return "no such file";
        }
        if (anchor == null) {
            return null;
        }
        Path shown = path.isEmpty() ? from : from.resolveSibling(path).normalize();
        if (!resolved.toString().endsWith(".md") || Files.isDirectory(resolved)) {
            return "an anchor into " + shown + ", which is not a Markdown file";
        }
        return anchors(resolved).contains(anchor) ? null : "no heading '" + anchor + "' in " + shown;
    }

    /** The anchors GitHub gives a file's headings: lower case, punctuation dropped, spaces as '-', repeats numbered. */
    private static Set<String> anchors(Path file) throws IOException {
        Set<String> anchors = new LinkedHashSet<>();
        Map<String, Integer> seen = new HashMap<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                continue;
            }
            Matcher m = HEADING.matcher(line);
            if (fenced || !m.matches()) {
                continue;
            }
            String text = m.group(1).replaceAll("\\[([^\\]]*)]\\([^)]*\\)", "$1");
            String slug = text.toLowerCase(Locale.ROOT)
                    .replaceAll("[^\\p{L}\\p{N} _-]", "")
                    .replace(' ', '-');
            int n = seen.merge(slug, 1, Integer::sum);
            anchors.add(n == 1 ? slug : slug + "-" + (n - 1));
        }
        return anchors;
    }

    /** The file's lines with fenced blocks blanked and inline code removed: links there are examples, not links. */
    private static List<String> prose(Path file) throws IOException {
        List<String> out = new ArrayList<>();
        boolean fenced = false;
        for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
            if (FENCE.matcher(line).find()) {
                fenced = !fenced;
                out.add("");
            } else {
                out.add(fenced ? "" : INLINE_CODE.matcher(line).replaceAll(""));
            }
        }
        return out;
    }

    private static boolean isBinary(byte[] bytes) {
        for (int i = 0; i < Math.min(bytes.length, 8000); i++) {
            if (bytes[i] == 0) {
                return true;
            }
        }
        return false;
    }
}
