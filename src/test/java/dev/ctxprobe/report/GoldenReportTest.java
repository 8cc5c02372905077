package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * Every format of the sample run against its golden file in {@code src/test/resources/dev/ctxprobe/report/golden}.
 * After an intended change, regenerate them with {@code -Dctxprobe.updateGolden=true} and review the diff.
 */
class GoldenReportTest {
    private static final Path GOLDEN = Path.of("src/test/resources/dev/ctxprobe/report/golden");

    /** Chart geometry depends on the fonts installed; the charts have their own tests. */
    private static final Pattern SVG = Pattern.compile("(<svg id='([a-z-]+)')[^>]*>.*?</svg>", Pattern.DOTALL);

    @ParameterizedTest
    @EnumSource(Format.class)
    void sampleRunMatchesGolden(Format format) throws IOException {
        String rendered = stable(format, Reports.renderFiles(List.of(ReportFixtures.SAMPLE_RUN), format));
        Path golden = GOLDEN.resolve("sample." + format.extension());
        if (Boolean.getBoolean("ctxprobe.updateGolden")) {
            Files.createDirectories(GOLDEN);
            Files.writeString(golden, rendered, StandardCharsets.UTF_8);
        }
        assertThat(golden)
                .as("golden file; create it with -Dctxprobe.updateGolden=true")
                .exists();
        assertThat(rendered).isEqualTo(Files.readString(golden, StandardCharsets.UTF_8));
    }

    @ParameterizedTest
    @EnumSource(Format.class)
    void renderingIsDeterministic(Format format) throws IOException {
        String first = Reports.renderFiles(List.of(ReportFixtures.SAMPLE), format);
        String second = Reports.renderFiles(List.of(ReportFixtures.SAMPLE), format);
        assertThat(second).isEqualTo(first);
    }

    /** A German locale writes 1.234,5 where the goldens have 1,234.5: the reports must not follow it. */
    @ParameterizedTest
    @EnumSource(Format.class)
    void theLocaleChangesNothing(Format format) throws IOException {
        List<Path> inputs = new ArrayList<>(List.of(ReportFixtures.SAMPLE));
        inputs.addAll(ReportFixtures.seedFiles(ReportFixtures.SEEDS));
        Locale before = Locale.getDefault();
        Locale beforeFormat = Locale.getDefault(Locale.Category.FORMAT);
        try {
            Locale.setDefault(Locale.GERMANY);
            String german = Reports.renderFiles(inputs, format);
            Locale.setDefault(Locale.US);
            String american = Reports.renderFiles(inputs, format);
            assertThat(german).isEqualTo(american);
        } finally {
            Locale.setDefault(before);
            Locale.setDefault(Locale.Category.FORMAT, beforeFormat);
        }
    }

    private static String stable(Format format, String rendered) {
        if (format != Format.HTML) {
            return rendered;
        }
        assertThat(SVG.matcher(rendered).results().count()).isEqualTo(2);
        return SVG.matcher(rendered).replaceAll("$1>(chart)</svg>");
    }
}
