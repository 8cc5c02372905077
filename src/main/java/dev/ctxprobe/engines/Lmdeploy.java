package dev.ctxprobe.engines;

import static dev.ctxprobe.engine.ProfileBuilder.MINUS_ONE;
import static dev.ctxprobe.engine.ProfileBuilder.MODELS;

import dev.ctxprobe.engine.EngineProfile;
import dev.ctxprobe.engine.ProfileBuilder;
import dev.ctxprobe.predict.ConfigOnlyModel;
import dev.ctxprobe.results.HintKind;
import java.util.List;

/** LMDeploy: an over-long prompt gets an empty answer; its memory is not modelled, only its session length. */
final class Lmdeploy {
    private static final EngineProfile PROFILE = ProfileBuilder.server("lmdeploy", HintKind.MAX_MODEL_LEN, MINUS_ONE)
            .readiness(MODELS)
            .emptyAnswerMeansTooLong()
            .tracebacks()
            .build();

    static final Engine ENGINE = new Engine(PROFILE, ConfigOnlyModel.sizing(PROFILE, "--session-len"), List.of());

    private Lmdeploy() {}
}
