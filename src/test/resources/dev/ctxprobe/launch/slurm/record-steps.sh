#!/usr/bin/env bash
# Records how jobs of the shape the Slurm launcher submits read in `scontrol show job -d -o` (about 10 s): a batch
# script `exec srun --kill-on-bad-exit=1 /bin/sh -c TASK`, the task writing its own output. Each fixture is the
# verbatim output of the command README.md names for it.
set -euo pipefail

here="$(cd "$(dirname "$0")" && pwd)"
work="${CTXPROBE_SLURM_DIR:-/tmp/ctxprobe-slurm}/record-steps"
rm -rf "$work"
mkdir -p "$work"
cd "$work"

# shellcheck source=record-lib.sh
. "$here/record-lib.sh"

# Submits TASK (sh code) as the launcher does, with extra sbatch options before the script.
step() {
    local name=$1 task=$2
    shift 2
    printf '#!/bin/sh\nexec srun --kill-on-bad-exit=1 /bin/sh -c %q\n' "$task" >"$work/$name.sh"
    sbatch --parsable --job-name="$name" --output="$work/$name.slurm.log" --no-requeue "$@" "$work/$name.sh"
}

oom=$(step step-oom "exec python3 -c 'b = [bytearray(1 << 20) for _ in range(400)]; print(len(b))'" --mem=100M)
segv=$(step step-signal 'exec sh -c "kill -SEGV \$\$"')
exit3=$(step step-exit3 'exit 3')
running=$(step step-running 'exec sleep 300')
wait_state "$oom" FAILED OUT_OF_MEMORY COMPLETED
wait_state "$segv" FAILED
wait_state "$exit3" FAILED
wait_state "$running" RUNNING
scontrol show job -d -o "$oom" >"$here/scontrol-d-step-oom.txt"
cp "$work/step-oom.slurm.log" "$here/step-oom-slurm.log"
scontrol show job -d -o "$segv" >"$here/scontrol-d-step-signal.txt"
scontrol show job -d -o "$exit3" >"$here/scontrol-d-step-exit3.txt"
scontrol show job -d -o "$running" >"$here/scontrol-d-step-running.txt"
scancel "$running"
wait_state "$running" CANCELLED
scontrol show job -d -o "$running" >"$here/scontrol-d-step-cancelled.txt"
# A task killed while it runs, as a crashing engine is.
crash=$(step step-crash 'sleep 1; kill -KILL $$')
wait_state "$crash" FAILED
scontrol show job -d -o "$crash" >"$here/scontrol-d-step-crash.txt"
