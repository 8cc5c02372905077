package dev.ctxprobe.report;

import dev.ctxprobe.results.Scenario;
import java.awt.BasicStroke;
import java.awt.Color;
import java.awt.Font;
import java.awt.Graphics2D;
import java.awt.Rectangle;
import java.awt.Shape;
import java.awt.geom.AffineTransform;
import java.awt.geom.Ellipse2D;
import java.awt.geom.Path2D;
import java.awt.geom.Rectangle2D;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.AttributedCharacterIterator;
import java.text.CharacterIterator;
import java.text.DecimalFormat;
import java.text.DecimalFormatSymbols;
import java.text.FieldPosition;
import java.text.NumberFormat;
import java.text.ParsePosition;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.OptionalDouble;
import java.util.TreeMap;
import java.util.function.ToDoubleFunction;
import org.jfree.chart.ChartUtils;
import org.jfree.chart.JFreeChart;
import org.jfree.chart.axis.LogAxis;
import org.jfree.chart.axis.LogTick;
import org.jfree.chart.axis.NumberAxis;
import org.jfree.chart.axis.NumberTick;
import org.jfree.chart.axis.NumberTickUnit;
import org.jfree.chart.axis.ValueAxis;
import org.jfree.chart.axis.ValueTick;
import org.jfree.chart.block.BlockBorder;
import org.jfree.chart.plot.DatasetRenderingOrder;
import org.jfree.chart.plot.SeriesRenderingOrder;
import org.jfree.chart.plot.XYPlot;
import org.jfree.chart.renderer.xy.XYLineAndShapeRenderer;
import org.jfree.chart.renderer.xy.XYStepRenderer;
import org.jfree.chart.text.TextUtils;
import org.jfree.chart.title.LegendTitle;
import org.jfree.chart.title.TextTitle;
import org.jfree.chart.ui.RectangleEdge;
import org.jfree.chart.ui.RectangleInsets;
import org.jfree.data.xy.XYSeries;
import org.jfree.data.xy.XYSeriesCollection;
import org.jfree.svg.SVGGraphics2D;
import org.jfree.svg.ViewBox;

/**
 * The report's charts: TTFT and the prefill rate (target / mean TTFT) against context length, one line per backend
 * and input, with each failed step drawn as an X at zero at its length; for a run with a capacity map, the longest
 * prompt held at once against the number of requests (docs/search.md#the-capacity-map). Rendered to SVG (inlined in
 * HTML) or PNG.
 */
final class Charts {
    static {
        // Charts need no display; set before the first AWT class loads unless the user chose otherwise.
        if (System.getProperty("java.awt.headless") == null) {
            System.setProperty("java.awt.headless", "true");
        }
        // Text through TextLayout (JFreeChart's rotated labels by default, a LogAxis's labels always) is shaped by
        // HarfBuzz over the FFM API on JDK 22+: hundreds more classes and stubs spun as the run ends, a share of its
        // peak memory (BENCHMARKS.md, "Memory and start-up"). drawString and FontMetrics, as the other labels are
        // drawn, need none of it; the workaround was for rotated text in the Java2D of JDK 1.4.
        TextUtils.setUseDrawRotatedStringWorkaround(false);
    }

    static final int WIDTH = 960;
    static final int HEIGHT = 460;

    /** The length charts' note in a run with a capacity map, whose steps they leave out. */
    static final String SINGLE_PROMPTS_ONLY =
            "Single prompts (N = 1) only: a step of N requests at once shares its prefill, another TTFT";

    /** Above this many milliseconds the TTFT axis switches to seconds. */
    private static final double SECONDS_FROM_MS = 10_000;

    private static final Color[] PALETTE = {
        new Color(0x1f77b4), new Color(0xff7f0e), new Color(0x2ca02c), new Color(0x9467bd),
        new Color(0x8c564b), new Color(0xe377c2), new Color(0x17becf), new Color(0xbcbd22),
        new Color(0x7f7f7f), new Color(0x393b79)
    };
    private static final String FONT = "SansSerif";

    /** Half the size of a failure's X, in pixels. */
    private static final double CROSS = 5;

    /** Centre to centre of Xs side by side: their width and a gap. */
    private static final double CROSS_SPACING = 2 * CROSS + 6;

    /** One chart of the report; {@code name} keys its SVG ids and PNG file name. */
    record Chart(String name, JFreeChart chart) {}

    private Charts() {}

    /**
     * The TTFT and prefill-rate charts, and the capacity map's where some answer has one; none when no input has a
     * launched step yet.
     */
    static List<Chart> of(List<ReportInput> inputs, Labels labels) {
        if (inputs.stream()
                .allMatch(s -> s.document().scenarios().stream()
                        .noneMatch(r -> r.outcome().launched()))) {
            return List.of();
        }
        OptionalDouble maxTtft = inputs.stream()
                .flatMap(s -> s.document().scenarios().stream())
                .filter(r -> r.concurrency() == 1)
                .map(StepFacts::passedTtftMs)
                .filter(Objects::nonNull)
                .mapToDouble(Double::doubleValue)
                .max();
        boolean seconds = maxTtft.orElse(0) >= SECONDS_FROM_MS;
        double ttftScale = seconds ? 1000 : 1;
        Chart ttft = new Chart(
                "ttft",
                chart(
                        "Time to first token vs context length",
                        seconds ? "TTFT (s, mean)" : "TTFT (ms, mean)",
                        inputs,
                        labels,
                        r -> {
                            Double ms = StepFacts.passedTtftMs(r);
                            return ms == null ? Double.NaN : ms / ttftScale;
                        },
                        // The prefill floor as a dashed line under the points (docs/results.md, % of roofline).
                        r -> r.roofline() == null || r.roofline().floorS() == null
                                ? Double.NaN
                                : r.roofline().floorS() * 1000 / ttftScale));
        Chart prefill = new Chart(
                "prefill",
                chart(
                        "Prefill rate vs context length",
                        "tokens/s (target / mean TTFT)",
                        inputs,
                        labels,
                        r -> {
                            Double ms = StepFacts.passedTtftMs(r);
                            Double rate = ms == null ? null : StepFacts.rate(r.targetLen(), ms);
                            return rate == null ? Double.NaN : rate;
                        },
                        null));
        List<Answer> answers = Answer.of(inputs, labels);
        if (!SurfaceTable.any(answers)) {
            return List.of(ttft, prefill);
        }
        // The map leads: for a run that asks for it, it is the answer at a glance.
        return List.of(capacity(answers), ttft, prefill);
    }

    /**
     * The capacity map (docs/search.md#the-capacity-map): the largest target held at once against the requests sent
     * at once, per backend and input. The measured levels are a staircase (between two measured N nothing was
     * tried), the smallest target not held an X above each level; where the file has them, the engine's statement
     * is a dashed line and ctxprobe plan's prediction a dotted one (one point at N = 1 while plan predicts single
     * prompts only).
     */
    static Chart capacity(List<Answer> answers) {
        XYSeriesCollection measured = new XYSeriesCollection();
        XYStepRenderer stairs = new XYStepRenderer();
        XYSeriesCollection beside = new XYSeriesCollection();
        XYLineAndShapeRenderer lines = new XYLineAndShapeRenderer();
        int colour = 0;
        int maxN = 1;
        for (Answer a : answers) {
            // Each backend keeps its colour of the length charts, which give one to every backend.
            Color c = PALETTE[colour++ % PALETTE.length];
            List<SurfaceTable.Level> levels = SurfaceTable.levels(a);
            if (levels.isEmpty()) {
                continue;
            }
            Map<Integer, Long> held = new TreeMap<>();
            Map<Integer, Long> not = new TreeMap<>();
            Map<Integer, Long> stated = new TreeMap<>();
            for (SurfaceTable.Level l : levels) {
                maxN = Math.max(maxN, l.n());
                putIfKnown(held, l.n(), l.maxOk());
                putIfKnown(not, l.n(), l.minFailed());
                putIfKnown(stated, l.n(), l.stated());
            }
            Map<Integer, Long> predicted = new TreeMap<>();
            if (Predicted.has(a.frontier())) {
                predicted.put(1, a.frontier().predicted().target());
            }
            String label = a.label();
            XYSeries stairsSeries = series(label + ": largest held at once", held);
            if (!stairsSeries.isEmpty()) {
                int i = measured.getSeriesCount();
                measured.addSeries(stairsSeries);
                stairs.setSeriesPaint(i, c);
                stairs.setSeriesStroke(i, new BasicStroke(2.5f));
                // A step renderer draws no shapes: each measured level's dot is a series of its own beside it.
                int dots = beside.getSeriesCount();
                beside.addSeries(series(label + ": measured", held));
                lines.setSeriesPaint(dots, c);
                lines.setSeriesLinesVisible(dots, false);
                lines.setSeriesShape(dots, new Ellipse2D.Double(-4, -4, 8, 8));
                lines.setSeriesVisibleInLegend(dots, false);
            }
            XYSeries notSeries = series(label + ": smallest not held", not);
            if (!notSeries.isEmpty()) {
                int i = beside.getSeriesCount();
                beside.addSeries(notSeries);
                lines.setSeriesPaint(i, c);
                lines.setSeriesLinesVisible(i, false);
                lines.setSeriesShape(i, cross(CROSS));
                lines.setLegendShape(i, cross(CROSS));
                lines.setSeriesStroke(i, new BasicStroke(2.5f));
                lines.setSeriesShapesFilled(i, false);
            }
            line(beside, lines, series(label + ": the engine's statement", stated), c, new float[] {6f, 4f});
            line(beside, lines, series(label + ": predicted (ctxprobe plan)", predicted), c, new float[] {2f, 3f});
        }
        lines.setUseOutlinePaint(false);
        lines.setDrawOutlines(true);

        LogAxis x = new PlainLabelLogAxis("requests at once (N, log scale)");
        x.setBase(2);
        x.setNumberFormatOverride(new TokenCountFormat());
        x.setTickUnit(new NumberTickUnit(1), false, false);
        x.setAutoTickUnitSelection(false);
        x.setMinorTickCount(1);
        x.setRange(1 / Math.sqrt(2), maxN * Math.sqrt(2));
        x.setLabelFont(new Font(FONT, Font.PLAIN, 13));
        x.setTickLabelFont(new Font(FONT, Font.PLAIN, 12));

        NumberAxis y = new NumberAxis("largest prompt held at once (tokens)");
        y.setAutoRangeIncludesZero(true);
        y.setNumberFormatOverride(new DecimalFormat("#,##0", DecimalFormatSymbols.getInstance(Locale.US)));
        y.setLabelFont(new Font(FONT, Font.PLAIN, 13));
        y.setTickLabelFont(new Font(FONT, Font.PLAIN, 12));

        XYPlot plot = new XYPlot(measured, x, y, stairs);
        plot.setDataset(1, beside);
        plot.setRenderer(1, lines);
        plot.setDatasetRenderingOrder(DatasetRenderingOrder.FORWARD);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        plot.setOutlinePaint(new Color(0xaaaaaa));
        plot.setAxisOffset(new RectangleInsets(4, 4, 4, 4));

        JFreeChart chart = new JFreeChart(
                "Longest prompt held at once vs requests at once", new Font(FONT, Font.BOLD, 17), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.setAntiAlias(true);
        chart.addSubtitle(new TextTitle(
                "Steps: all N requests served and held at once; X: the smallest that was not; dashed: the engine's"
                        + " statement; dotted: ctxprobe plan",
                new Font(FONT, Font.PLAIN, 12)));
        LegendTitle legend = chart.getLegend();
        legend.setItemFont(new Font(FONT, Font.PLAIN, 12));
        legend.setPosition(RectangleEdge.BOTTOM);
        legend.setFrame(BlockBorder.NONE);
        return new Chart("capacity", chart);
    }

    private static void putIfKnown(Map<Integer, Long> byN, int n, Long target) {
        if (target != null) {
            byN.put(n, target);
        }
    }

    private static XYSeries series(String name, Map<Integer, Long> byN) {
        XYSeries s = new XYSeries(name, true, true);
        byN.forEach(s::add);
        return s;
    }

    /** A line of the map beside the measured staircase, in the backend's colour with its dash; none when empty. */
    private static void line(
            XYSeriesCollection data, XYLineAndShapeRenderer renderer, XYSeries s, Color c, float[] dash) {
        if (s.isEmpty()) {
            return;
        }
        int i = data.getSeriesCount();
        data.addSeries(s);
        renderer.setSeriesPaint(i, c);
        renderer.setSeriesStroke(i, new BasicStroke(1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, dash, 0f));
        renderer.setSeriesShape(i, new Ellipse2D.Double(-2.5, -2.5, 5, 5));
    }

    /** @param floor each step's prefill floor in the chart's unit, drawn as a dashed line; null for none */
    private static JFreeChart chart(
            String title,
            String yLabel,
            List<ReportInput> inputs,
            Labels labels,
            ToDoubleFunction<Scenario> y,
            ToDoubleFunction<Scenario> floor) {
        XYSeriesCollection data = new XYSeriesCollection();
        FailureRenderer renderer = new FailureRenderer();
        List<Integer> failureSeries = new ArrayList<>();
        long minX = Long.MAX_VALUE;
        long maxX = Long.MIN_VALUE;
        int colour = 0;
        for (ReportInput input : inputs) {
            for (String backend : input.backends()) {
                String label = labels.of(input, backend);
                List<Scenario> single = FrontierLine.at(input.steps(backend), 1);
                XYSeries passed = new XYSeries(label, true, true);
                XYSeries failed = new XYSeries(label + ": failed", true, true);
                XYSeries floors = new XYSeries(label + ": prefill floor", true, true);
                for (Scenario row : single) {
                    double under = floor == null ? Double.NaN : floor.applyAsDouble(row);
                    if (Double.isFinite(under)) {
                        floors.add(row.targetLen(), under);
                    }
                    if (!row.outcome().launched()) {
                        continue;
                    }
                    minX = Math.min(minX, row.targetLen());
                    maxX = Math.max(maxX, row.targetLen());
                    double value = y.applyAsDouble(row);
                    if (row.success() && Double.isFinite(value)) {
                        passed.add(row.targetLen(), value);
                    } else if (!row.success()) {
                        failed.add(row.targetLen(), 0);
                    }
                }
                Color c = PALETTE[colour++ % PALETTE.length];
                if (!passed.isEmpty()) {
                    int i = data.getSeriesCount();
                    data.addSeries(passed);
                    renderer.setSeriesPaint(i, c);
                    renderer.setSeriesStroke(i, new BasicStroke(2f));
                    renderer.setSeriesShape(i, new Ellipse2D.Double(-3.5, -3.5, 7, 7));
                }
                if (!floors.isEmpty()) {
                    int i = data.getSeriesCount();
                    data.addSeries(floors);
                    renderer.setSeriesPaint(i, c);
                    renderer.setSeriesStroke(
                            i,
                            new BasicStroke(
                                    1.5f, BasicStroke.CAP_BUTT, BasicStroke.JOIN_MITER, 10f, new float[] {6f, 4f}, 0f));
                    renderer.setSeriesShapesVisible(i, false);
                }
                if (!failed.isEmpty()) {
                    int i = data.getSeriesCount();
                    data.addSeries(failed);
                    failureSeries.add(i);
                    renderer.setSeriesPaint(i, c);
                    renderer.setSeriesLinesVisible(i, false);
                    renderer.setSeriesShape(i, cross(CROSS));
                    renderer.setLegendShape(i, cross(CROSS));
                    renderer.setSeriesOutlineStroke(i, new BasicStroke(2.5f));
                    renderer.setSeriesStroke(i, new BasicStroke(2.5f));
                    renderer.setSeriesShapesFilled(i, false);
                }
            }
        }
        renderer.sideBySide(data, failureSeries);
        renderer.setUseOutlinePaint(false);
        renderer.setDrawOutlines(true);

        ValueAxis x = xAxis(minX, maxX);
        x.setLabelFont(new Font(FONT, Font.PLAIN, 13));
        x.setTickLabelFont(new Font(FONT, Font.PLAIN, 12));

        NumberAxis yAxis = new NumberAxis(yLabel);
        yAxis.setAutoRangeIncludesZero(true);
        // A margin below zero, so the X of a failed step (drawn at zero) is not cut in half by the plot's edge.
        yAxis.setAutoRangeStickyZero(false);
        yAxis.setNumberFormatOverride(new DecimalFormat("#,##0.###", DecimalFormatSymbols.getInstance(Locale.US)));
        yAxis.setLabelFont(new Font(FONT, Font.PLAIN, 13));
        yAxis.setTickLabelFont(new Font(FONT, Font.PLAIN, 12));

        XYPlot plot = new XYPlot(data, x, yAxis, renderer);
        plot.setSeriesRenderingOrder(SeriesRenderingOrder.FORWARD);
        plot.setBackgroundPaint(Color.WHITE);
        plot.setDomainGridlinePaint(new Color(0xdddddd));
        plot.setRangeGridlinePaint(new Color(0xdddddd));
        plot.setOutlinePaint(new Color(0xaaaaaa));
        plot.setAxisOffset(new RectangleInsets(4, 4, 4, 4));

        JFreeChart chart = new JFreeChart(title, new Font(FONT, Font.BOLD, 17), plot, true);
        chart.setBackgroundPaint(Color.WHITE);
        chart.setAntiAlias(true);
        chart.addSubtitle(new TextTitle(
                "X at zero: a failed step at that length (side by side where several failed at one length)",
                new Font(FONT, Font.PLAIN, 12)));
        if (inputs.stream().flatMap(i -> i.document().scenarios().stream()).anyMatch(r -> r.concurrency() > 1)) {
            // A step of N requests at once times N prefills sharing the machine: another TTFT (docs/results.md).
            chart.addSubtitle(new TextTitle(SINGLE_PROMPTS_ONLY, new Font(FONT, Font.PLAIN, 12)));
        }
        LegendTitle legend = chart.getLegend();
        legend.setItemFont(new Font(FONT, Font.PLAIN, 12));
        legend.setPosition(RectangleEdge.BOTTOM);
        legend.setFrame(BlockBorder.NONE);
        return chart;
    }

    /**
     * Draws each failed step's X; where several series failed at one length (both H200 backends at 1M in the
     * seeds), their Xs stand side by side around it, a few pixels apart, instead of one over the other.
     */
    static final class FailureRenderer extends XYLineAndShapeRenderer {
        private static final long serialVersionUID = 1L;

        /** Horizontal shift in pixels by series, then by item. */
        private final Map<Integer, Map<Integer, Double>> shifts = new HashMap<>();

        void sideBySide(XYSeriesCollection data, List<Integer> failureSeries) {
            Map<Double, List<Integer>> seriesAt = new TreeMap<>();
            for (int series : failureSeries) {
                XYSeries s = data.getSeries(series);
                for (int item = 0; item < s.getItemCount(); item++) {
                    seriesAt.computeIfAbsent(s.getX(item).doubleValue(), k -> new ArrayList<>())
                            .add(series);
                }
            }
            for (int series : failureSeries) {
                XYSeries s = data.getSeries(series);
                for (int item = 0; item < s.getItemCount(); item++) {
                    List<Integer> here = seriesAt.get(s.getX(item).doubleValue());
                    if (here.size() > 1) {
                        double shift = (here.indexOf(series) - (here.size() - 1) / 2.0) * CROSS_SPACING;
                        shifts.computeIfAbsent(series, k -> new HashMap<>()).put(item, shift);
                    }
                }
            }
        }

        /** The pixel shift of one item's X, 0 where it failed alone at its length. */
        double shift(int series, int item) {
            return shifts.getOrDefault(series, Map.of()).getOrDefault(item, 0.0);
        }

        @Override
        public Shape getItemShape(int series, int item) {
            Shape shape = super.getItemShape(series, item);
            double dx = shift(series, item);
            return dx == 0 ? shape : AffineTransform.getTranslateInstance(dx, 0).createTransformedShape(shape);
        }
    }

    /**
     * Context length on a log-2 axis with ticks at powers of two when the lengths span two powers or more
     * (4K to 1M in the seeds); on a linear axis when they sit close together, as a frontier search leaves them.
     */
    private static ValueAxis xAxis(long minX, long maxX) {
        if (maxX >= 4 * minX) {
            LogAxis x = new PlainLabelLogAxis("context length (tokens, log scale)");
            x.setBase(2);
            x.setNumberFormatOverride(new TokenCountFormat());
            x.setTickUnit(new NumberTickUnit(1), false, false);
            x.setAutoTickUnitSelection(false);
            x.setMinorTickCount(1);
            // Half a power of two of margin each side keeps the first and last X off the plot's edge.
            x.setRange(minX / Math.sqrt(2), maxX * Math.sqrt(2));
            return x;
        }
        NumberAxis x = new NumberAxis("context length (tokens)");
        x.setNumberFormatOverride(new DecimalFormat("#,##0", DecimalFormatSymbols.getInstance(Locale.US)));
        x.setStandardTickUnits(NumberAxis.createIntegerTickUnits());
        double margin = Math.max(256, (maxX - minX) * 0.08);
        x.setRange(Math.max(0, minX - margin), maxX + margin);
        return x;
    }

    /**
     * A log axis whose tick labels are plain strings, measured and drawn as a NumberAxis's are. LogAxis makes each label
     * an AttributedString (for exponents, which the token format never writes), and JFreeChart draws those through
     * TextLayout: see the static block.
     */
    static final class PlainLabelLogAxis extends LogAxis {
        private static final long serialVersionUID = 1L;

        PlainLabelLogAxis(String label) {
            super(label);
        }

        @Override
        protected List<ValueTick> refreshTicksHorizontal(Graphics2D g2, Rectangle2D dataArea, RectangleEdge edge) {
            List<ValueTick> ticks = new ArrayList<>();
            for (Object tick : super.refreshTicksHorizontal(g2, dataArea, edge)) {
                ticks.add(tick instanceof LogTick log ? plain(log) : (ValueTick) tick);
            }
            return ticks;
        }

        private static ValueTick plain(LogTick tick) {
            String text = null;
            if (tick.getAttributedLabel() != null) {
                StringBuilder b = new StringBuilder();
                AttributedCharacterIterator chars = tick.getAttributedLabel().getIterator();
                for (char c = chars.first(); c != CharacterIterator.DONE; c = chars.next()) {
                    b.append(c);
                }
                text = b.toString();
            }
            return new NumberTick(
                    tick.getTickType(),
                    tick.getValue(),
                    text,
                    tick.getTextAnchor(),
                    tick.getRotationAnchor(),
                    tick.getAngle());
        }
    }

    /** An X of the given half-size, drawn as a thick outline. */
    private static Shape cross(double r) {
        Path2D.Double x = new Path2D.Double();
        x.moveTo(-r, -r);
        x.lineTo(r, r);
        x.moveTo(-r, r);
        x.lineTo(r, -r);
        return x;
    }

    /**
     * The chart as an inline {@code <svg>} element that scales to its container. Its ids are prefixed with
     * the chart's name so two charts in one page never share a clip path and the output is reproducible.
     * JFreeSVG escapes every string it draws for XML, so series names from a results file stay text.
     */
    static String svg(Chart chart) {
        SVGGraphics2D g2 = new SVGGraphics2D(WIDTH, HEIGHT);
        g2.setDefsKeyPrefix(chart.name() + "-");
        // Two decimals are a hundredth of a pixel: more only makes the page heavier.
        g2.setGeomDoubleConverter(Charts::twoDecimals);
        g2.setTransformDoubleConverter(Charts::twoDecimals);
        chart.chart().draw(g2, new Rectangle(0, 0, WIDTH, HEIGHT));
        return g2.getSVGElement("chart-" + chart.name(), false, new ViewBox(0, 0, WIDTH, HEIGHT), null, null);
    }

    private static String twoDecimals(double value) {
        return new DecimalFormat("0.##", DecimalFormatSymbols.getInstance(Locale.US)).format(value);
    }

    /** Writes the chart as {@code DIR/<name>.png} and returns the file. */
    static Path png(Chart chart, Path dir) throws IOException {
        Files.createDirectories(dir);
        Path file = dir.resolve(chart.name() + ".png");
        ChartUtils.saveChartAsPNG(file.toFile(), chart.chart(), WIDTH, HEIGHT);
        return file;
    }

    /** Token counts as axis ticks: 512, 4K, 64K, 1M, 1.5M (binary K and M, as context lengths are quoted). */
    static final class TokenCountFormat extends NumberFormat {
        private static final long serialVersionUID = 1L;

        @Override
        public StringBuffer format(double number, StringBuffer toAppendTo, FieldPosition pos) {
            DecimalFormat digits = new DecimalFormat("0.#", DecimalFormatSymbols.getInstance(Locale.US));
            if (number >= 1024 * 1024) {
                return toAppendTo.append(digits.format(number / (1024 * 1024))).append('M');
            }
            if (number >= 1024) {
                return toAppendTo.append(digits.format(number / 1024)).append('K');
            }
            return toAppendTo.append(digits.format(number));
        }

        @Override
        public StringBuffer format(long number, StringBuffer toAppendTo, FieldPosition pos) {
            return format((double) number, toAppendTo, pos);
        }

        @Override
        public Number parse(String source, ParsePosition parsePosition) {
            throw new UnsupportedOperationException("tick labels are only written");
        }
    }
}
