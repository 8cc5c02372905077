package dev.ctxprobe.client;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.List;
import okio.Buffer;
import okio.Okio;
import okio.Source;
import okio.Timeout;
import org.junit.jupiter.api.Test;

class StreamReadingTest {

    private static final String CHOICE = "{\"choices\":[{\"index\":0,\"text\":\"x\",\"finish_reason\":null}]}";
    private static final String USAGE = "{\"choices\":[],\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":2}}";

    /** Hands out one chunk per read and notes the time just before each, so arrivals can be matched to chunks. */
    private static final class ChunkSource implements Source {
        final Deque<byte[]> chunks = new ArrayDeque<>();
        final List<Long> handedOut = new ArrayList<>();

        ChunkSource(String... parts) {
            for (String part : parts) {
                chunks.add(part.getBytes(StandardCharsets.UTF_8));
            }
        }

        @Override
        public long read(Buffer sink, long byteCount) {
            byte[] chunk = chunks.poll();
            if (chunk == null) {
                return -1;
            }
            handedOut.add(System.nanoTime());
            sink.write(chunk);
            return chunk.length;
        }

        @Override
        public Timeout timeout() {
            return Timeout.NONE;
        }

        @Override
        public void close() {}
    }

    private static StreamReading read(ChunkSource chunks) throws IOException {
        StreamReading reading = new StreamReading(ReadLimits.forOutput(1));
        reading.counting = new StreamReading.CountingSource(chunks, Long.MAX_VALUE, System::nanoTime);
        reading.readEvents(Okio.buffer(reading.counting));
        return reading;
    }

    @Test
    void eventSplitAcrossReadsArrivesWithTheReadThatCompletesIt() throws IOException {
        String event = "data: " + CHOICE + "\n\n";
        ChunkSource chunks =
                new ChunkSource(event.substring(0, 7), event.substring(7, 30), event.substring(30), "data: [DONE]\n\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.OK);
        assertThat(r.choiceEvents).isEqualTo(1);
        assertThat(r.sawDone).isTrue();
        assertThat(r.tFirst).isGreaterThanOrEqualTo(chunks.handedOut.get(2));
        assertThat(r.tFirst).isLessThan(chunks.handedOut.get(3));
    }

    @Test
    void eventsInOneReadShareItsArrivalAndLaterReadsGiveTheGaps() throws IOException {
        ChunkSource chunks = new ChunkSource(
                "data: " + CHOICE + "\n\ndata: " + CHOICE + "\n\n", "data: " + CHOICE + "\n\n", "data: [DONE]\n\n");

        StreamReading r = read(chunks);

        assertThat(r.choiceEvents).isEqualTo(3);
        assertThat(r.itlMs()).hasSize(2);
        assertThat(r.itlMs().get(0)).isZero();
        assertThat(r.itlMs().get(1)).isPositive();
        assertThat(r.tLast).isGreaterThanOrEqualTo(chunks.handedOut.get(1));
    }

    @Test
    void crlfLinesAndDataWithoutSpaceAreEvents() throws IOException {
        ChunkSource chunks = new ChunkSource(
                "data:" + CHOICE + "\r\n\r\n",
                ": keep-alive\r\nevent: message\r\nid: 7\r\nretry: 10\r\n",
                "data:{\"choices\":[{\"text\":\"y\",\"finish_reason\":\"length\"}]}\r\n\r\n",
                "data:" + USAGE + "\r\n\r\ndata:[DONE]\r\n\r\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.OK);
        assertThat(r.choiceEvents).isEqualTo(2);
        assertThat(r.finishReason).isEqualTo("length");
        assertThat(r.promptTokens).isEqualTo(50);
        assertThat(r.completionTokens).isEqualTo(2);
        assertThat(r.sawDone).isTrue();
    }

    @Test
    void choiceWithEmptyTextCountsAndUsageOnlyEventDoesNot() throws IOException {
        ChunkSource chunks = new ChunkSource(
                "data: {\"choices\":[{\"index\":0,\"text\":\"\",\"finish_reason\":\"length\"}]}\n\n",
                "data: " + USAGE + "\n\n",
                "data: {\"usage\":{\"prompt_tokens\":50,\"completion_tokens\":1}}\n\n",
                "data: [DONE]\n\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.OK);
        assertThat(r.choiceEvents).isEqualTo(1);
        assertThat(r.tLast).isEqualTo(r.tFirst);
        assertThat(r.tFirst).isLessThan(chunks.handedOut.get(1));
        assertThat(r.finishReason).isEqualTo("length");
        assertThat(r.completionTokens).isEqualTo(1);
    }

    @Test
    void aPromptCountThatIsNoWholeNumberIsKeptAsWritten() throws IOException {
        for (String[] c : new String[][] {{"\"1024\"", "\"1024\""}, {"1e400", "1e400"}, {"null", null}}) {
            StreamReading r = read(new ChunkSource(
                    "data: {\"choices\":[{\"index\":0,\"text\":\"a\",\"finish_reason\":\"length\"}]}\n\n",
                    "data: {\"choices\":[],\"usage\":{\"prompt_tokens\":" + c[0] + ",\"completion_tokens\":1}}\n\n",
                    "data: [DONE]\n\n"));
            assertThat(r.promptTokens).as(c[0]).isNull();
            assertThat(r.promptTokensWritten).as(c[0]).isEqualTo(c[1]);
        }
    }

    @Test
    void choicesInsideStringsOrNestedObjectsDoNotCount() throws IOException {
        ChunkSource chunks = new ChunkSource(
                "data: {\"note\":\"\\\"choices\\\":[1]\",\"meta\":{\"choices\":[1],\"error\":\"x\"}}\n\n",
                "data: {\"choices\":null,\"error\":null}\n\n",
                "data: [DONE]\n\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.NO_CHOICES);
        assertThat(r.choiceEvents).isZero();
    }

    @Test
    void errorEventStopsReadingAndKeepsItsJson() throws IOException {
        String error = "{\"error\":{\"message\":\"prompt too long\",\"code\":400}}";
        ChunkSource chunks =
                new ChunkSource("data: " + CHOICE + "\n\n", "data: " + error + "\n\n", "data: " + CHOICE + "\n\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.ERROR_EVENT);
        assertThat(r.errorText).isEqualTo(error);
        assertThat(r.choiceEvents).isEqualTo(1);
    }

    @Test
    void anErrorFieldInsteadOfDataIsAnErrorEvent() throws IOException {
        // llama.cpp of early 2025 (b4748) with --no-context-shift refuses a streamed prompt this way.
        String error = "{\"error\":{\"code\":400,\"message\":\"the request exceeds the available context size. try"
                + " increasing the context size or enable context shift\",\"type\":\"invalid_request_error\"}}";
        StreamReading r = read(new ChunkSource("error: " + error + "\n\n", "data: [DONE]\n\n"));

        assertThat(r.outcome).isEqualTo(RequestOutcome.ERROR_EVENT);
        assertThat(r.errorText).isEqualTo(error);
        assertThat(r.choiceEvents).isZero();
    }

    @Test
    void errorAfterChoicesInTheSameEventIsStillAnError() throws IOException {
        ChunkSource chunks = new ChunkSource(
                "data: {\"choices\":[{\"text\":\"x\"}],\"error\":\"engine died\"}\n\n", "data: [DONE]\n\n");

        StreamReading r = read(chunks);

        assertThat(r.outcome).isEqualTo(RequestOutcome.ERROR_EVENT);
        assertThat(r.choiceEvents).isZero();
    }

    @Test
    void brokenOrTrailingJsonIsAProtocolError() throws IOException {
        StreamReading broken = read(new ChunkSource("data: {\"choices\":[\n\n"));
        StreamReading trailing = read(new ChunkSource("data: " + CHOICE + " {}\n\n"));

        assertThat(broken.outcome).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(broken.errorText).contains("not valid JSON");
        assertThat(trailing.outcome).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(trailing.errorText).contains("after the JSON value");
    }

    @Test
    void lastLineWithoutTerminatorIsStillRead() throws IOException {
        StreamReading r = read(new ChunkSource("data: " + CHOICE + "\n\ndata: " + USAGE));

        assertThat(r.outcome).isEqualTo(RequestOutcome.OK);
        assertThat(r.sawDone).isFalse();
        assertThat(r.promptTokens).isEqualTo(50);
    }

    @Test
    void lineLongerThanTheReadBufferIsReadWhole() throws IOException {
        String text = "é".repeat(20_000);
        String event = "data: {\"choices\":[{\"text\":\"" + text + "\",\"finish_reason\":\"stop\"}]}\n\n";

        StreamReading r = read(new ChunkSource(event.substring(0, 9000), event.substring(9000), "data: [DONE]\n\n"));

        assertThat(r.choiceEvents).isEqualTo(1);
        assertThat(r.finishReason).isEqualTo("stop");
    }

    @Test
    void lineThatIsNotAnEventIsAProtocolError() throws IOException {
        StreamReading r = read(new ChunkSource("data: " + CHOICE + "\n\nhello\n\n"));

        assertThat(r.outcome).isEqualTo(RequestOutcome.PROTOCOL_ERROR);
        assertThat(r.errorText).endsWith("hello");
    }

    @Test
    void aStreamThatEndsWithoutUsageOrDoneIsNotAnAnswer() throws IOException {
        StreamReading cut = read(new ChunkSource("data: " + CHOICE + "\n\n", "data: " + CHOICE + "\n\n"));
        assertThat(cut.outcome).isEqualTo(RequestOutcome.CONNECTION_FAILED);
        assertThat(cut.errorText).contains("without usage or [DONE]");

        StreamReading usageOnly = read(new ChunkSource("data: " + CHOICE + "\n\n", "data: " + USAGE + "\n\n"));
        assertThat(usageOnly.outcome).isEqualTo(RequestOutcome.OK);

        StreamReading done = read(new ChunkSource("data: " + CHOICE + "\n\n", "data: [DONE]\n\n"));
        assertThat(done.outcome).isEqualTo(RequestOutcome.OK);
    }

    /** The start of the output text is kept, where a pass key is read (docs/results.md#answer), and no more. */
    @Test
    void theOutputsFirstCharactersAreKept() throws IOException {
        String first = "{\"choices\":[{\"index\":0,\"text\":\" 48213.\",\"finish_reason\":null}]}";
        String longer = "{\"choices\":[{\"text\":\"" + "y".repeat(100) + "\",\"finish_reason\":\"length\"}]}";
        StreamReading reading = read(new ChunkSource(
                "data: " + first + "\n\n", "data: " + longer + "\n\n", "data: " + USAGE + "\n\ndata: [DONE]\n\n"));
        assertThat(reading.outcome).isEqualTo(RequestOutcome.OK);
        assertThat(reading.finishReason).isEqualTo("length");
        assertThat(reading.textHead.toString())
                .hasSize(StreamReading.TEXT_HEAD_CHARS)
                .startsWith(" 48213.yyy");
    }
}
