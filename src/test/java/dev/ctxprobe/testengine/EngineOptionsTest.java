package dev.ctxprobe.testengine;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import dev.ctxprobe.testengine.EngineOptions.Fault;
import dev.ctxprobe.testengine.EngineOptions.Mode;
import org.junit.jupiter.api.Test;

class EngineOptionsTest {

    @Test
    void defaultsImitateAVllmServerWhereEverythingFits() {
        EngineOptions options = EngineOptions.parse("--port", "8000");

        assertThat(options.host()).isEqualTo("127.0.0.1");
        assertThat(options.mode()).isEqualTo(Mode.VLLM);
        assertThat(options.capacity()).isEqualTo(EngineOptions.HUGE_CAPACITY);
        assertThat(options.faults()).isEmpty();
        assertThat(options.refuseAt()).isEmpty();
    }

    @Test
    void eachEnginesContextFlagSetsTheLength() {
        assertThat(EngineOptions.parse("--port", "1", "--context-length", "100").maxModelLen())
                .isEqualTo(100);
        assertThat(EngineOptions.parse("--port", "1", "-c", "200").maxModelLen())
                .isEqualTo(200);
        assertThat(EngineOptions.parse("--port", "1", "--session-len=300").maxModelLen())
                .isEqualTo(300);
    }

    @Test
    void refuseAtListAndRepeatedFaultsAreAllKept() {
        EngineOptions options = EngineOptions.parse(
                "--port",
                "1",
                "--mode",
                "sglang",
                "--refuse-at",
                "29000, 31000",
                "--fault",
                "ignore-sigterm",
                "--fault",
                "leave-child",
                "--prefill-us-per-token",
                "0.5");

        assertThat(options.mode()).isEqualTo(Mode.SGLANG);
        assertThat(options.refuseAt()).containsExactlyInAnyOrder(29_000L, 31_000L);
        assertThat(options.faults()).containsExactlyInAnyOrder(Fault.IGNORE_SIGTERM, Fault.LEAVE_CHILD);
        assertThat(options.prefillUsPerToken()).isEqualTo(0.5);
    }

    @Test
    void aRefusalNamesTheCapacityOrJustBelowTheRefusedLength() {
        assertThat(EngineOptions.parse("--port", "1", "--max-model-len", "2048", "--capacity", "1000")
                        .refusalLimit())
                .isEqualTo(1000);
        assertThat(EngineOptions.parse("--port", "1", "--max-model-len", "2048", "--refuse-at", "2048")
                        .refusalLimit())
                .isEqualTo(2047);
    }

    @Test
    void badArgumentsAreRejectedWithWhatIsWrong() {
        assertThatThrownBy(() -> EngineOptions.parse("--max-model-len", "10")).hasMessageContaining("--port");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "1", "--fault", "melt"))
                .hasMessageContaining("unknown fault 'melt'");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "x"))
                .hasMessageContaining("argument --port: invalid int value: 'x'");
        assertThatThrownBy(() -> EngineOptions.parse("--port", "1", "--speed", "9"))
                .hasMessageContaining("unrecognized argument: --speed");
        assertThatThrownBy(() -> EngineOptions.parse("--port")).hasMessageContaining("expected one argument");
    }
}
