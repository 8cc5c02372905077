# Sourced by record.sh and record-steps.sh: reading a job's fields and waiting for its state.

field() { scontrol show job -o "$1" 2>/dev/null | tr ' ' '\n' | sed -n "s/^$2=//p"; }

# Polls every 50 ms until the job's JobState is one of the given states; fails after 180 s.
wait_state() {
    local job=$1 deadline=$((SECONDS + 180)) state
    shift
    while true; do
        state=$(field "$job" JobState)
        for wanted in "$@"; do
            [[ "$state" == "$wanted" ]] && return 0
        done
        ((SECONDS < deadline)) || { echo "job $job is '$state', not $*" >&2; exit 1; }
        sleep 0.05
    done
}
