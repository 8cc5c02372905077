#!/usr/bin/env bash
# Re-records the fixtures next to this script from the cluster .ci/slurm-up brings up (about 4 minutes: the TIMEOUT
# job has to outlive its minute and finished jobs have to leave the controller). Each fixture is the verbatim
# output of the command README.md names for it; timings.txt and the check-*.txt files are what this script measured.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
work="${CTXPROBE_SLURM_DIR:-/tmp/ctxprobe-slurm}/record"
rm -rf "$work"
mkdir -p "$work"
# Jobs inherit the submitter's directory; the fixtures then show this neutral one.
cd "$work"
: >"$here/timings.txt"

now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", b - a }'; }
timing() { echo "$1" | tee -a "$here/timings.txt"; }
# shellcheck source=record-lib.sh
. "$here/record-lib.sh"

# A pending job reads Reason=None until the scheduler has looked at it.
wait_reason() {
    local job=$1 deadline=$((SECONDS + 60))
    while [[ "$(field "$job" Reason)" == None ]]; do
        ((SECONDS < deadline)) || { echo "job $job kept Reason=None" >&2; exit 1; }
        sleep 0.05
    done
}

# Waits until the controller has purged the job (MinJobAge) and records what scontrol and squeue then say.
wait_gone() {
    local job=$1 deadline=$((SECONDS + 600))
    while scontrol show job -o "$job" >/dev/null 2>&1; do
        ((SECONDS < deadline)) || { echo "job $job was never purged" >&2; exit 1; }
        sleep 0.5
    done
}

# Runs a command and keeps its stdout, stderr and exit status in one fixture.
capture() {
    local out=$1 rc=0
    shift
    {
        echo "\$ $*"
        "$@" 2>&1 || rc=$?
        echo "[exit status $rc]"
    } >"$out"
}

sub() { sbatch --parsable "$@"; }

# squeue --json lists every job the controller holds: start from none, so the fixtures hold only this script's.
deadline=$((SECONDS + 120))
while [[ -n "$(squeue -h -t all -o %i)" ]]; do
    ((SECONDS < deadline)) || { echo "the controller still holds jobs: $(squeue -h -t all -o %i | tr '\n' ' ')" >&2; exit 1; }
    sleep 1
done

# --- PENDING (Resources): a job holding every CPU, and one more behind it.
cpus=$(sinfo -h -n localhost -o %c)
blocker=$(sub --job-name=blocker -c "$cpus" --output=/dev/null --wrap "sleep 300")
wait_state "$blocker" RUNNING
pending=$(sub --job-name=pending-resources --output=/dev/null --wrap "sleep 1")
wait_reason "$pending"
squeue --json >"$here/squeue-pending-resources.json"
scontrol show job -o "$pending" >"$here/scontrol-pending-resources.txt"
squeue -h -j "$pending" -o '%i|%T|%r|%N' >"$here/squeue-format-pending-resources.txt"
scancel "$blocker" "$pending"
wait_state "$blocker" CANCELLED
wait_state "$pending" CANCELLED

# --- PENDING (partition down).
scontrol update PartitionName=debug State=DOWN
down=$(sub --job-name=pending-partition-down --output=/dev/null --wrap "sleep 1")
wait_reason "$down"
squeue --json >"$here/squeue-pending-partition-down.json"
scontrol show job -o "$down" >"$here/scontrol-pending-partition-down.txt"
scontrol update PartitionName=debug State=UP
scancel "$down"
wait_state "$down" CANCELLED

# --- RUNNING, then CANCELLED by someone else's scancel.
t0=$(now)
running=$(sub --job-name=running --output=/dev/null --wrap "srun sleep 300")
t1=$(now)
wait_state "$running" RUNNING
t2=$(now)
timing "submit: sbatch --parsable returned after $(elapsed "$t0" "$t1") s; RUNNING after $(elapsed "$t0" "$t2") s"
squeue --json >"$here/squeue-running.json"
scontrol show job -o "$running" >"$here/scontrol-running.txt"
squeue -h -j "$running" -o '%i|%T|%r|%N' >"$here/squeue-format-running.txt"
t0=$(now)
scancel "$running"
# COMPLETING: cancelled, its processes being killed; the job ends CANCELLED once they are gone.
wait_state "$running" COMPLETING
squeue --json >"$here/squeue-completing.json"
scontrol show job -o "$running" >"$here/scontrol-completing.txt"
wait_state "$running" CANCELLED
t1=$(now)
timing "cancel (srun sleep step, no TERM handler): CANCELLED after $(elapsed "$t0" "$t1") s"
scontrol show job -o "$running" >"$here/scontrol-cancelled.txt"

# --- COMPLETED, FAILED (exit code), FAILED (batch script killed by a signal), OUT_OF_MEMORY.
completed=$(sub --job-name=completed --output=/dev/null --wrap "echo done")
failed=$(sub --job-name=failed --output=/dev/null --wrap "exit 3")
wait_state "$completed" COMPLETED
wait_state "$failed" FAILED
signalled=$(sub --job-name=failed-signal --output=/dev/null --wrap 'kill -SEGV $$')
oom=$(sub --job-name=oom --mem=100M --output="$work/oom.out" \
    --wrap "python3 -c 'b = [bytearray(1 << 20) for _ in range(400)]; print(len(b))'")
wait_state "$signalled" FAILED
wait_state "$oom" OUT_OF_MEMORY COMPLETED FAILED
scontrol show job -o "$completed" >"$here/scontrol-completed.txt"
scontrol show job -o "$failed" >"$here/scontrol-failed.txt"
scontrol show job -o "$signalled" >"$here/scontrol-failed-signal.txt"
scontrol show job -o "$oom" >"$here/scontrol-oom.txt"
cp "$work/oom.out" "$here/oom-job-output.txt"
squeue --json >"$here/squeue-ended.json"
capture "$here/squeue-format-completed.txt" squeue -h -j "$completed" -o '%i|%T|%r|%N'

# --- TIMEOUT: a --time=1 job that outlives its minute.
t0=$(now)
timeout_job=$(sub --job-name=timeout --time=1 --output=/dev/null --wrap "sleep 300")
wait_state "$timeout_job" RUNNING
t1=$(now)
wait_state "$timeout_job" TIMEOUT
t2=$(now)
timing "timeout (--time=1): TIMEOUT $(elapsed "$t1" "$t2") s after it started running"
scontrol show job -o "$timeout_job" >"$here/scontrol-timeout.txt"
squeue --json >"$here/squeue-timeout.json"

# --- Gone from the controller: MinJobAge after the end, and there is no accounting to ask instead.
wait_gone "$timeout_job"
t3=$(now)
timing "purge: the TIMEOUT job left the controller $(elapsed "$t2" "$t3") s after it ended (MinJobAge=$(scontrol show config | sed -n 's/^MinJobAge *= *//p'))"
capture "$here/scontrol-gone.txt" scontrol show job -o "$completed"
capture "$here/squeue-format-gone.txt" squeue -h -j "$completed" -o '%i|%T|%r|%N'
capture "$here/sacct-gone.txt" sacct -j "$completed"
squeue --json >"$here/squeue-gone.json"

# --- An engine run as an srun step with --output: TERM, KILL after KillWait, a double-forked daemon, output.
cat >"$work/engine.sh" <<'EOF'
#!/usr/bin/env bash
# Stands in for an engine: ignores SIGTERM (so only KillWait's SIGKILL ends it), logs each signal, starts a
# daemon that double-forks away into its own session (reparented to PID 1) and ignores SIGTERM too, and writes
# every line both to stdout and straight to a file, the file being the truth the step's output is compared with.
truth=$1
line() { echo "$1"; echo "$1" >>"$truth"; }
trap 'line "TERM $(date +%s.%N)"' TERM
trap 'line "CONT $(date +%s.%N)"' CONT
setsid bash -c 'trap "" TERM; sleep 1000 </dev/null >/dev/null 2>&1 & echo $! >"$0"' "$truth.daemon" &
wait
i=0
while true; do
    line "line $i $(date +%s.%N)"
    i=$((i + 1))
    sleep 0.05
done
EOF
chmod +x "$work/engine.sh"
# $1 names the check, $2 is srun's output option (empty: relayed through srun into the batch output), $3 the file
# the step's lines end up in.
check_engine() {
    local name=$1 srun_output=$2 step_file=$3 job t0 t1 t2 daemon parent kept
    job=$(sub --job-name="$name" --output="$work/$name.batch.out" \
        --wrap "srun $srun_output $work/engine.sh $work/$name.truth")
    wait_state "$job" RUNNING
    while [[ ! -s "$work/$name.truth.daemon" ]] || (($(cat "$work/$name.truth" 2>/dev/null | wc -l) < 20)); do
        sleep 0.05
    done
    daemon=$(<"$work/$name.truth.daemon")
    parent=$(ps -o ppid= -p "$daemon" | tr -d ' ')
    t0=$(now)
    scancel "$job"
    wait_state "$job" CANCELLED
    t1=$(now)
    while [[ -e "/proc/$daemon" ]] && (($(date +%s) - ${t0%.*} < 60)); do sleep 0.05; done
    t2=$(now)
    # Slurm adds its own lines (the CANCELLED notice) to the same file; the engine's are the rest.
    grep -E '^(line|TERM|CONT)' "$work/$step_file" >"$work/$name.kept" || true
    kept=$(wc -l <"$work/$name.kept")
    {
        echo "job $job: sbatch --wrap \"srun $srun_output engine.sh\", scancel $job at $t0"
        echo "signals the step saw (from engine.sh's own file; bash runs traps in signal-number order):"
        grep -E '^(TERM|CONT)' "$work/$name.truth" || echo "  none"
        echo "last line the step wrote itself: $(grep '^line' "$work/$name.truth" | tail -n 1)"
        echo "JobState CANCELLED $(elapsed "$t0" "$t1") s after scancel"
        if [[ -e "/proc/$daemon" ]]; then
            echo "double-forked daemon (pid $daemon, parent $(ps -o ppid= -p "$daemon")) STILL ALIVE 60 s after scancel"
            kill -KILL "$daemon"
        else
            echo "double-forked daemon (pid $daemon, own session, parent pid $parent, ignoring TERM) gone $(elapsed "$t0" "$t2") s after scancel"
        fi
        echo "engine.sh wrote $(wc -l <"$work/$name.truth") lines; $step_file holds $kept of them"
        if cmp -s "$work/$name.truth" "$work/$name.kept"; then
            echo "complete: the same lines in the same order"
        else
            echo "INCOMPLETE; its last lines:"
            tail -n 3 "$work/$step_file"
        fi
    } >"$here/check-$name.txt"
    timing "cancel ($name, step ignoring TERM): CANCELLED after $(elapsed "$t0" "$t1") s"
}
check_engine srun-output-file "--output=$work/srun-output-file.step.out" srun-output-file.step.out
check_engine srun-output-per-task "--output=$work/srun-output-per-task.step.%t" srun-output-per-task.step.0
check_engine srun-relayed "" srun-relayed.batch.out

# --- Two tasks on the one node, SLURM_PROCID standing in for the node rank.
two=$(sub --job-name=two-tasks --ntasks=2 --output="$work/two-tasks.out" --wrap 'srun bash -c "echo rank=\$SLURM_PROCID nodeid=\$SLURM_NODEID localid=\$SLURM_LOCALID ntasks=\$SLURM_NTASKS nodelist=\$SLURM_JOB_NODELIST step=\$SLURM_STEP_ID; sleep 3"')
wait_state "$two" RUNNING
scontrol show job -o "$two" >"$here/scontrol-two-tasks-running.txt"
wait_state "$two" COMPLETED
sort "$work/two-tasks.out" >"$here/two-tasks-output.txt"

# --- Submit to RUNNING and scancel to CANCELLED, five times over, for a step that dies on SIGTERM.
runs=()
cancels=()
for _ in 1 2 3 4 5; do
    t0=$(now)
    job=$(sub --job-name=timing --output=/dev/null --wrap "srun sleep 300")
    wait_state "$job" RUNNING
    t1=$(now)
    sleep 0.5
    t2=$(now)
    scancel "$job"
    wait_state "$job" CANCELLED
    t3=$(now)
    runs+=("$(elapsed "$t0" "$t1")")
    cancels+=("$(elapsed "$t2" "$t3")")
done
timing "5 runs: submit to RUNNING ${runs[*]} s; scancel to CANCELLED ${cancels[*]} s"

echo "recorded into $here"
