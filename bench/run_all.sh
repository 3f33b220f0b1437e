#!/usr/bin/env bash
# The full benchmark: per-page timing (TCP_NODELAY fix on and off, direct and through HAProxy),
# the load matrix (app and hello demo, post-run GC on and off, think and burst modes,
# 1/25/50/100 sessions), the think run with and without the learner store, first paint in
# headless Chromium, and a soak run. Writes JSON figures, server logs and summary.md (paste it
# into bench/README.md, "Figures"; its first table sets the app beside the hello demo) to
# bench/results/.
#
#   bash bench/run_all.sh                  # everything, about 90 minutes on 2 CPUs
#   SOAK_MINUTES=0 bash bench/run_all.sh   # without the soak, about 60 minutes
#   # the summary's first table only (about 25 minutes on the busy 2-core machine):
#   SESSIONS=100 GCS=off MODES=burst SOAK_MINUTES=0 TIMING_RERUNS=10 STORE_DURATION_S=40 bash bench/run_all.sh
#
# Settings (environment): SESSIONS, DURATION_S, TARGETS, GCS, MODES, TIMING_RERUNS, TIMING_VIA,
# TIMING_NODELAY, STORE_SESSIONS, STORE_DURATION_S (0: skip), FIRST_PAINT (0: skip),
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
TIMING_VIA="${TIMING_VIA:-direct proxy}"
TIMING_NODELAY="${TIMING_NODELAY:-on off}"
STORE_SESSIONS="${STORE_SESSIONS:-200}"
STORE_DURATION_S="${STORE_DURATION_S:-$DURATION_S}"
FIRST_PAINT="${FIRST_PAINT:-1}"
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
step bench.page_timing --targets "${TARGETS// /,}" --gc "${GCS// /,}" --reruns "$TIMING_RERUNS" \
    --via "${TIMING_VIA// /,}" --nodelay "${TIMING_NODELAY// /,}" --out "$OUT/page_timing.json"
for target in $TARGETS; do
    for gc in $GCS; do
        for mode in $MODES; do
            for sessions in $SESSIONS; do
                step bench.run_load --target "$target" --gc "$gc" --mode "$mode" --sessions "$sessions" --duration-s "$DURATION_S"
            done
        done
    done
done
if [ "$STORE_DURATION_S" != "0" ]; then
    # The learner store's cost: the same think run with the store on (SQLite unless
    # LAB_DATABASE_URL says otherwise) and with a store that keeps nothing; the hello demo beside.
    for store in on off; do
        step bench.run_load --target app --gc off --mode think --sessions "$STORE_SESSIONS" \
            --duration-s "$STORE_DURATION_S" --store "$store"
    done
    step bench.run_load --target hello --gc off --mode think --sessions "$STORE_SESSIONS" --duration-s "$STORE_DURATION_S"
fi
if [ "$FIRST_PAINT" != "0" ]; then
    step bench.first_paint --targets "${TARGETS// /,}" --out "$OUT/first_paint.json"
fi
if [ "$SOAK_MINUTES" != "0" ]; then
    step bench.run_load --target app --gc "$SOAK_GC" --mode think --sessions "$SOAK_SESSIONS" \
        --soak-minutes "$SOAK_MINUTES" --lifetime-s "$SOAK_LIFETIME_S"
fi

{
    echo "Produced by \`bash bench/run_all.sh\` (SESSIONS=\"$SESSIONS\" DURATION_S=$DURATION_S TARGETS=\"$TARGETS\" GCS=\"$GCS\""\
         "MODES=\"$MODES\" TIMING_VIA=\"$TIMING_VIA\" TIMING_NODELAY=\"$TIMING_NODELAY\" STORE_SESSIONS=$STORE_SESSIONS"\
         "STORE_DURATION_S=$STORE_DURATION_S FIRST_PAINT=$FIRST_PAINT SOAK_MINUTES=$SOAK_MINUTES SOAK_SESSIONS=$SOAK_SESSIONS SOAK_GC=$SOAK_GC SOAK_LIFETIME_S=$SOAK_LIFETIME_S)"\
         "on $(date -u +%Y-%m-%d), taking $(( ($(date +%s) - started) / 60 )) minutes."
    echo
    "$PYTHON" -m bench.report "$OUT"
} >"$OUT/summary.md"
echo "summary: $OUT/summary.md" | tee -a "$LOG"
