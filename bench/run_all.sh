#!/usr/bin/env bash
# The figures that matter to a host in one table beside Streamlit's hello page, then (MATRIX=1) the full
# load matrix.
#
#   bash bench/run_all.sh              # the table: 20 to 30 minutes on the 2-core machine
#   MATRIX=1 bash bench/run_all.sh     # and the load matrix and a soak: about 100 minutes
#
# The table's runs, each for the app and the hello page (GC off, as the app is configured):
#   - 100 learners clicking at once (burst), straight to one server: hello, app, app, hello, ROUNDS
#     times over (bench/compare.py): rerun p95, reruns a second per core, memory per learner;
#   - 200 learners thinking, straight to one server: memory per learner as a class works;
#   - first paint in headless Chromium, cold and warm server (bench.first_paint);
#   - 100 learners clicking at once through HAProxy (deploy/proxy.sh) with 1 and 2 replicas.
# `uptime` is recorded before and after every step (the machine is shared), in uptime.txt and the
# summary. Figures go to bench/results/ (JSON, server logs, run_all.log) and summary.md; the first table
# goes, dated, with the host and its load average, to the top of docs/results.md (bench.report --record).
# Timings are reported, never judged: a failed step is logged and the rest go on.
#
# Settings (environment): BURST_SESSIONS (100), THINK_SESSIONS (200), DURATION_S (40), REPLICAS
# ("1 2"), FIRST_PAINT (1; 0 skips it), ROUNDS (2 rounds of A B B A: one round's two pairs moved a
# ratio by up to a fifth between runs of the same code), RECORD (1; 0 leaves docs/results.md alone, for
# a quick check of the script), PYTHON; with MATRIX=1 also SESSIONS,
# MATRIX_DURATION_S, TARGETS, GCS, MODES, SOAK_MINUTES, SOAK_SESSIONS, SOAK_GC, SOAK_LIFETIME_S.
set -uo pipefail
cd "$(dirname "$0")/.."

BURST_SESSIONS="${BURST_SESSIONS:-100}"
THINK_SESSIONS="${THINK_SESSIONS:-200}"
DURATION_S="${DURATION_S:-40}"
REPLICAS="${REPLICAS:-1 2}"
FIRST_PAINT="${FIRST_PAINT:-1}"
ROUNDS="${ROUNDS:-2}"
RECORD="${RECORD:-1}"
MATRIX="${MATRIX:-0}"
SESSIONS="${SESSIONS:-1 25 50 100}"
MATRIX_DURATION_S="${MATRIX_DURATION_S:-60}"
TARGETS="${TARGETS:-app hello}"
GCS="${GCS:-on off}"
MODES="${MODES:-think burst}"
SOAK_MINUTES="${SOAK_MINUTES:-30}"
SOAK_SESSIONS="${SOAK_SESSIONS:-50}"
SOAK_GC="${SOAK_GC:-off}"
SOAK_LIFETIME_S="${SOAK_LIFETIME_S:-300}"
PYTHON="${PYTHON:-python3}"
OUT=bench/results
LOG="$OUT/run_all.log"
LOADS="$OUT/uptime.txt"
mkdir -p "$OUT"
# The summary covers this run only: move an earlier run's files aside.
if compgen -G "$OUT/*.json" >/dev/null || compgen -G "$OUT/compare-*" >/dev/null || [ -e "$LOADS" ]; then
    earlier="$OUT/earlier-$(date +%Y%m%d-%H%M%S)"
    mkdir -p "$earlier"
    find "$OUT" -maxdepth 1 \( -type f -o -type d -name 'compare-*' \) -exec mv {} "$earlier/" \;
fi
: >"$LOG"
: >"$LOADS"

step() {
    local name="$1"
    shift
    echo "== $(date +%H:%M:%S) $*" | tee -a "$LOG"
    echo "before $name: $(uptime)" >>"$LOADS"
    "$PYTHON" -m "$@" 2>&1 | tee -a "$LOG"
    local status=${PIPESTATUS[0]}
    echo "after $name: $(uptime)" >>"$LOADS"
    [ "$status" -eq 0 ] || echo "!! failed with status $status: $*" | tee -a "$LOG"
}

started=$(date +%s)
# Runs in turn (hello, app, app, hello): the ratio of the two is the geometric mean over both pairs,
# so neither gains from always running second (bench/compare.py).
step "burst, hello and app in turn" bench.compare --a-name hello --a-args=--target=hello --b-name app \
    --mode burst --sessions "$BURST_SESSIONS" --duration-s "$DURATION_S" --rounds "$ROUNDS" --out "$OUT/compare-burst"
for target in hello app; do
    step "think $target" bench.run_load --target "$target" --gc off --mode think --sessions "$THINK_SESSIONS" \
        --duration-s "$DURATION_S"
done
if [ "$FIRST_PAINT" != "0" ]; then
    step "first paint" bench.first_paint --targets app,hello --out "$OUT/first_paint.json"
fi
for replicas in $REPLICAS; do
    for target in hello app; do
        step "burst $target, $replicas behind HAProxy" bench.run_load --target "$target" --gc off \
            --mode burst --sessions "$BURST_SESSIONS" --duration-s "$DURATION_S" --replicas "$replicas"
    done
done

if [ "$MATRIX" != "0" ]; then
    for target in $TARGETS; do
        for gc in $GCS; do
            for mode in $MODES; do
                for sessions in $SESSIONS; do
                    step "matrix" bench.run_load --target "$target" --gc "$gc" --mode "$mode" \
                        --sessions "$sessions" --duration-s "$MATRIX_DURATION_S"
                done
            done
        done
    done
    if [ "$SOAK_MINUTES" != "0" ]; then
        step "soak" bench.run_load --target app --gc "$SOAK_GC" --mode think --sessions "$SOAK_SESSIONS" \
            --soak-minutes "$SOAK_MINUTES" --lifetime-s "$SOAK_LIFETIME_S"
    fi
fi

{
    echo "Produced by \`bash bench/run_all.sh\` (BURST_SESSIONS=$BURST_SESSIONS THINK_SESSIONS=$THINK_SESSIONS"\
         "DURATION_S=$DURATION_S REPLICAS=\"$REPLICAS\""\
         "FIRST_PAINT=$FIRST_PAINT ROUNDS=$ROUNDS MATRIX=$MATRIX) on $(date -u +%Y-%m-%d), taking"\
         "$(( ($(date +%s) - started) / 60 )) minutes."
    echo
    "$PYTHON" -m bench.report "$OUT"
} >"$OUT/summary.md"
# The one table, on the terminal too.
sed -n '/^### The app beside/,/^### Targets/p' "$OUT/summary.md" | sed '$d'
echo "summary: $OUT/summary.md" | tee -a "$LOG"
if [ "$RECORD" != "0" ]; then
    "$PYTHON" -m bench.report --record "$OUT" | tee -a "$LOG"
fi
