package dev.ctxprobe.report;

import static org.assertj.core.api.Assertions.assertThat;

import dev.ctxprobe.results.FailureClass;
import dev.ctxprobe.results.Frontier;
import dev.ctxprobe.results.Outcome;
import dev.ctxprobe.results.PasskeyAnswer;
import dev.ctxprobe.results.Scenario;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * The frontier of right answers, taken from the steps and shown beside the served frontier
 * (docs/search.md#the-frontier-of-right-answers).
 */
class AnsweredCorrectlyTest {

    private static Scenario step(long target, PasskeyAnswer answer) {
        return Scenario.builder("b", target, target + 1024, "serve")
                .answer(answer, answer == null ? null : 1.5)
                .build();
    }

    private static PasskeyAnswer answered(boolean right) {
        return PasskeyAnswer.of(List.of(new PasskeyAnswer.Key(0, 0.5, "48213", right ? " 48213." : " 11111.", right)));
    }

    @Test
    void theRightAnswersEndWhereTheFirstWrongOneAboveThemIs() {
        List<Scenario> steps = List.of(
                step(131_072, answered(false)),
                step(65_536, answered(true)),
                step(98_304, answered(false)),
                Scenario.builder("b", 262_144, 263_168, "serve")
                        .outcome(Outcome.failed(FailureClass.KV_INSUFFICIENT), "no", null)
                        .build());
        Frontier f = Frontier.ofSteps(steps);
        assertThat(f.maxOkTarget()).isEqualTo(131_072);
        assertThat(f.correct()).isEqualTo(new Frontier.Correct(65_536L, 98_304L, List.of(), null, null));
        assertThat(FrontierLine.answer(f, steps))
                .startsWith("max 131,072 tokens (next 262,144 fails: kv_insufficient); answered correctly up to"
                        + " 65,536 (next 98,304 wrong)  4 launches");
    }

    @Test
    void aBackendNotCheckedSaysWhy() {
        String why = "the model does not retrieve a pass key even at 1,024 tokens (asked for 48213, it answered \"x\")";
        List<Scenario> steps =
                List.of(step(4096, PasskeyAnswer.notChecked(why)), step(8192, PasskeyAnswer.notChecked(why)));
        Frontier.Correct c = Frontier.Correct.ofSteps(steps);
        assertThat(c.maxCorrectTarget()).isNull();
        assertThat(c.minWrongTarget()).isNull();
        assertThat(c.notChecked()).containsExactly(4096L, 8192L);
        assertThat(FrontierLine.answeredCorrectly(c)).isEqualTo("; answered correctly: not checked (" + why + ")");
    }

    @Test
    void withoutACheckTheLineIsAsBefore() {
        List<Scenario> steps = List.of(step(4096, null));
        assertThat(Frontier.Correct.ofSteps(steps)).isNull();
        assertThat(FrontierLine.answer(Frontier.ofSteps(steps), steps)).doesNotContain("answered");
    }

    @Test
    void everyAnswerWrongIsNone() {
        assertThat(FrontierLine.answeredCorrectly(Frontier.Correct.ofSteps(List.of(step(4096, answered(false))))))
                .isEqualTo("; answered correctly: none (4,096 wrong)");
        assertThat(answered(false).wrongDepths()).containsExactly(0.5);
    }

    @Test
    void theDepthsOfTheLargestTargetThatAskedThemAreShownBesideTheRightAnswers() {
        PasskeyAnswer.Depth start = PasskeyAnswer.Depth.answered(0.1, "11111", " 11111.", true, null);
        PasskeyAnswer.Depth end = PasskeyAnswer.Depth.answered(0.9, "22222", " 22222.", true, null);
        PasskeyAnswer.Depth middle = PasskeyAnswer.Depth.answered(0.5, "48213", " I do not know.", false, 0);
        PasskeyAnswer.Depth lost = PasskeyAnswer.Depth.notChecked(0.9, "its request was not served (timeout)");
        List<Scenario> steps = List.of(
                step(4096, answered(true).withDepths(List.of(start, middle, end), 20)),
                step(16_384, answered(false).withDepths(List.of(start, middle, lost), 80)),
                step(8192, answered(false)));
        Frontier f = Frontier.ofSteps(steps);
        assertThat(f.correct().atFrontier())
                .isEqualTo(new Frontier.Correct.AtFrontier(16_384, List.of(start, middle, lost)));
        assertThat(FrontierLine.answer(f, steps))
                .contains("; answered correctly up to 4,096 (next 8,192 wrong); at 16,384 by depth: 0.1 correct,"
                        + " 0.5 wrong, 0.9 not checked  3 launches");
        assertThat(FrontierLine.byDepth(Frontier.Correct.ofSteps(List.of(step(4096, answered(true))))))
                .as("no step asked the depths")
                .isEmpty();
    }
}
