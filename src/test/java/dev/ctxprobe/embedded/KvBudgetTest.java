package dev.ctxprobe.embedded;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import org.junit.jupiter.api.Test;

class KvBudgetTest {

    @Test
    void microCostsItsF16KvRowsPlusBookkeepingPerToken() {
        KvBudget budget = KvBudget.of(8L << 20, ModelShape.MICRO);
        assertThat(budget.bytesPerToken()).isEqualTo(1 * 2 * 32 * 2 + 64);
        assertThat(budget.capacityTokens()).isEqualTo(43_690);
    }

    @Test
    void groupedQueryAttentionCountsOnlyKvHeads() {
        // mini: 4 layers, width 128 over 4 heads (32 each), 2 KV heads -> 64 wide K and V rows.
        assertThat(KvBudget.of(1 << 20, ModelShape.MINI).bytesPerToken()).isEqualTo(4 * 2 * 64 * 2 + 64);
    }

    @Test
    void stableLinesCarryThousandsSeparators() {
        KvBudget budget = KvBudget.of(8_388_608, ModelShape.MICRO);
        assertThat(budget.capacityLine(40_192))
                .isEqualTo("kv capacity 43,690 tokens in 8,388,608 bytes, ctx-size 40,192");
        assertThat(budget.refusalLine(65_792))
                .isEqualTo("kv budget exceeded: 8,388,608 bytes hold 43,690 tokens, 65,792 requested");
    }

    @Test
    void capacityIsInclusive() {
        KvBudget budget = new KvBudget(192 * 100, 192);
        assertThat(budget.holds(100)).isTrue();
        assertThat(budget.holds(101)).isFalse();
    }

    @Test
    void contextIsRoundedUpToLlamaCppsPadding() {
        assertThat(KvBudget.roundCtx(1)).isEqualTo(32);
        assertThat(KvBudget.roundCtx(4096)).isEqualTo(4096);
        assertThat(KvBudget.roundCtx(40_000)).isEqualTo(40_000);
        assertThat(KvBudget.roundCtx(40_001)).isEqualTo(40_032);
    }

    @Test
    void parsesSizesWithBinaryUnits() {
        assertThat(KvBudget.parseSize("6000000")).isEqualTo(6_000_000);
        assertThat(KvBudget.parseSize("8MiB")).isEqualTo(8_388_608);
        assertThat(KvBudget.parseSize("8m")).isEqualTo(8_388_608);
        assertThat(KvBudget.parseSize("1GiB")).isEqualTo(1L << 30);
        assertThat(KvBudget.parseSize(" 512 KiB ")).isEqualTo(512 * 1024);
        assertThatThrownBy(() -> KvBudget.parseSize("lots"))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("8MiB");
        assertThatThrownBy(() -> KvBudget.parseSize("99999999999TiB")).isInstanceOf(IllegalArgumentException.class);
    }
}
