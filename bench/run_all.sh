#!/usr/bin/env bash
# The full benchmark: per-page timing, the load matrix (app and hello demo, post-run GC on
# and off, think and burst modes, 1/25/50/100 sessions) and a soak run. Writes JSON figures,
# server logs and summary.md (paste it into bench/README.md, "Figures") to bench/results/.
#
#   bash bench/run_all.sh                  # everything, about 80 minutes on 2 CPUs
#   SOAK_MINUTES=0 bash bench/run_all.sh   # without the soak, about 50 minutes
#
# Settings (environment): SESSIONS, DURATION_S, TARGETS, GCS, MODES, TIMING_RERUNS,
# SOAK_MINUTES, SOAK_SESSIONS, SOAK_GC, SOAK_LIFETIME_S, PYTHON.
# A run that fails is logged and the matrix goes on; timings never fail the script.
set -uo pipefail
cd "$(dirname "$0")/.."

SESSIONS="${SESSIONS:-1 25 50 100}"
DURATION_S="${DURATION_S:-60}"
TARGETS="${TARGETS:-app hello}"
GCS="${GCS:-on off}"
MODES="${MODES:-think burst}"
TIMING_RERUNS="${TIMING_RERUNS:-20}"
SOAK_MINUTES="${SOAK_MINUTES:-30}"
SOAK_SESSIONS="${SOAK_SESSIONS:-50}"
SOAK_GC="${SOAK_GC:-off}"
SOAK_LIFETIME_S="${SOAK_LIFETIME_S:-300}"
PYTHON="${PYTHON:-python3}"
OUT=bench/results
LOG="$OUT/run_all.log"
mkdir -p "$OUT"
# The summary covers this run only: move an earlier run's files aside.
if compgen -G "$OUT/*.json" >/dev/null; then
    earlier="$OUT/earlier-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$earlier"
    find "$OUT" -maxdepth 1 -type f -exec mv {} "$earlier/" \;
fi
: >"$LOG"

step() {
    echo "== $(date +%H:%M:%S) $*" | tee -a "$LOG"
    "$PYTHON" -m "$@" 2>&1 | tee -a "$LOG"
    local status=${PIPESTATUS[0]}
    [ "$status" -eq 0 ] || echo "!! failed with status $status: $*" | tee -a "$LOG"
}

started=$(date +%s)
step bench.page_timing --targets "${TARGETS// /,}" --gc "${GCS// /,}" --reruns "$TIMING_RERUNS" --out "$OUT/page_timing.json"
for target in $TARGETS; do
    for gc in $GCS; do
        for mode in $MODES; do
            for sessions in $SESSIONS; do
                step bench.run_load --target "$target" --gc "$gc" --mode "$mode" --sessions "$sessions" --duration-s "$DURATION_S"
            done
        done
    done
done
if [ "$SOAK_MINUTES" != "0" ]; then
    step bench.run_load --target app --gc "$SOAK_GC" --mode think --sessions "$SOAK_SESSIONS" \
        --soak-minutes "$SOAK_MINUTES" --lifetime-s "$SOAK_LIFETIME_S"
fi

{
    echo "Produced by \`bash bench/run_all.sh\` (SESSIONS=\"$SESSIONS\" DURATION_S=$DURATION_S TARGETS=\"$TARGETS\" GCS=\"$GCS\""\
         "MODES=\"$MODES\" SOAK_MINUTES=$SOAK_MINUTES SOAK_SESSIONS=$SOAK_SESSIONS SOAK_GC=$SOAK_GC SOAK_LIFETIME_S=$SOAK_LIFETIME_S)"\
         "on $(date -u +%Y-%m-%d), taking $(( ($(date +%s) - started) / 60 )) minutes."
    echo
    "$PYTHON" -m bench.report "$OUT"
} >"$OUT/summary.md"
echo "summary: $OUT/summary.md" | tee -a "$LOG"
