package dev.ctxprobe.results;

/**
 * The seeds' {@code metadata} object, key for key, then ctxprobe's additions ({@code tool}, {@code host},
 * {@code started_at}, {@code finished_at}).
 *
 * @param script the experiment file's path
 * @param env the Python or conda environment the engines run in, else ""
 * @param gitCommit short hash of the repository holding the experiment file, "" outside git
 * @param gitDirty "dirty" or "clean"
 * @param finishedAt null while the run is going
 * @param schemaVersion the version of this file's schema ({@link #SCHEMA_VERSION} when ctxprobe wrote it); absent in
 *     the seeds and in ctxprobe's files written before it was recorded, which read as they always did
 */
public record Metadata(
        String experiment,
        String runId,
        String timestamp,
        String model,
        String backend,
        String engine,
        String hardware,
        String accelerator,
        String chip,
        String script,
        String env,
        String gitCommit,
        String gitDirty,
        String description,
        Tool tool,
        String host,
        String startedAt,
        String finishedAt,
        Integer schemaVersion) {

    /**
     * The schema ctxprobe writes: 1 adds {@code schema_version}, each scenario's {@code concurrency} and a matrix
     * cell's {@code params} to the unversioned files before it. A reader refuses a file of a later version.
     */
    public static final int SCHEMA_VERSION = 1;

    /** The program that wrote the file. */
    public record Tool(String name, String version) {}

    public Metadata finished(String at) {
        return new Metadata(
                experiment,
                runId,
                timestamp,
                model,
                backend,
                engine,
                hardware,
                accelerator,
                chip,
                script,
                env,
                gitCommit,
                gitDirty,
                description,
                tool,
                host,
                startedAt,
                at,
                schemaVersion);
    }
}
