#!/usr/bin/env bash
# Blackbox crash test for Shale (RocksDB's db_crashtest.py blackbox mode).
#
# Each iteration starts shale-stress on the same DB with a new seed (so new
# random options), kills it with SIGKILL after a random 1-10 s, then runs
# shale-stress --verify_only on the DB: every acknowledged write must be
# there, and a write in flight at the kill may be present or absent. The next
# iteration verifies again on start and goes on writing. A final verify-only
# run closes the test. Exits non-zero on any verification failure or error,
# and on a run that ended other than by our SIGKILL or a clean exit 0 (a
# panic, an abort, an error exit).
#
# With HISTORY=1 the runs use shale-stress --history (few keys, every
# operation recorded in a history that survives the kill) and each verify
# run reads every key back and checks the whole history so far, across every
# kill: linearizability per key, batch atomicity and consistent snapshot
# reads across keys (see crates/shale-stress/src/stress/history_mode.rs).
#
# Build first:  CARGO_TARGET_DIR=target cargo build --release -p shale-stress
# Usage:        bench/crash_test.sh [ITERATIONS] [extra shale-stress flags...]
# Environment (defaults in brackets): BIN [target/release/shale-stress],
#   DB [/tmp/shale-crash-db], THREADS [4], MAX_KEY [100000],
#   MIN_KILL [1], MAX_KILL [10] (seconds), SEED [time], SYNC_ONE_IN [20]
#   (1 run in N uses --sync), KEEP [0] (1: keep the DB afterwards),
#   HISTORY [0] (1: history mode; MAX_KEY then defaults to 64),
#   OPS_PER_THREAD [100000000] (caps a run; bounds the history's growth),
#   COLUMN_FAMILIES [1] (keys spread over that many column families; batches,
#   snapshot reads and scans span them, and each verify run checks that every
#   batch cut by a kill is in all its families or in none),
#   BLOB_FILES [drawn] (1: key-value separation on in every family of every
#   writing run, its other options and garbage collection drawn per run; 0:
#   off; unset: each run draws it per family; never with FIFO, which is then
#   not drawn).
#
# Extra flags go to every writing run, not to the verify runs; what a verify
# run needs is in the expected state (the filter is fixed when the DB is
# created). Expiring puts and the compaction filter, for example:
#   bench/crash_test.sh 10 --ttl_percent=30 --compaction_filter
# (without them each run draws --ttl_percent, and the first run draws the
# filter, from its seed; both refused with HISTORY=1).
set -uo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN:-$here/target/release/shale-stress}
DB=${DB:-/tmp/shale-crash-db}
THREADS=${THREADS:-4}
HISTORY=${HISTORY:-0}
if ((HISTORY)); then MAX_KEY=${MAX_KEY:-64}; else MAX_KEY=${MAX_KEY:-100000}; fi
MIN_KILL=${MIN_KILL:-1}
MAX_KILL=${MAX_KILL:-10}
SEED=${SEED:-$(date +%s)}
SYNC_ONE_IN=${SYNC_ONE_IN:-20}
KEEP=${KEEP:-0}
OPS_PER_THREAD=${OPS_PER_THREAD:-100000000}
COLUMN_FAMILIES=${COLUMN_FAMILIES:-1}
ITERATIONS=${1:-20}
shift || true
EXTRA=("$@")

if [[ ! -x $BIN ]]; then
    echo "crash_test: $BIN not found; build it first" >&2
    exit 2
fi

LOG=$(mktemp -d /tmp/shale-crash-log.XXXXXX)
rm -rf "$DB" "$DB.expected" "$DB.history"
MODE=(--column_families="$COLUMN_FAMILIES")
if ((HISTORY)); then MODE+=(--history="$DB.history"); fi
BLOB_FILES=${BLOB_FILES:-}
BLOB=()
if [[ -n $BLOB_FILES ]]; then BLOB=(--enable_blob_files="$BLOB_FILES"); fi
RANDOM=$SEED
echo "crash_test: $ITERATIONS iterations, db=$DB threads=$THREADS max_key=$MAX_KEY column_families=$COLUMN_FAMILIES history=$HISTORY blob_files=${BLOB_FILES:-drawn} seed=$SEED logs=$LOG"

total_ops=0
failures=0
kills=0

verify() { # $1 = label
    local out=$LOG/verify-$1.log
    "$BIN" --db="$DB" "${MODE[@]}" --max_key="$MAX_KEY" --verify_only --seed=$((RANDOM * 32768 + RANDOM)) >"$out" 2>&1
    local rc=$?
    if [[ $rc -ne 0 ]]; then
        echo "crash_test: verification FAILED after $1 (exit $rc):" >&2
        grep -E "FAILURE|error|panicked" "$out" | head -20 >&2
        failures=$((failures + 1))
    fi
    grep -E '^(verify|history|check)' "$out" | sed "s/^/  [$1] /"
    return $rc
}

for ((i = 1; i <= ITERATIONS; i++)); do
    seed=$((RANDOM * 32768 + RANDOM))
    sync=()
    if ((SYNC_ONE_IN > 0 && RANDOM % SYNC_ONE_IN == 0)); then sync=(--sync); fi
    kill_after=$((MIN_KILL + RANDOM % (MAX_KILL - MIN_KILL + 1)))
    out=$LOG/run-$i.log
    "$BIN" --db="$DB" "${MODE[@]}" --threads="$THREADS" --max_key="$MAX_KEY" --seed="$seed" \
        --ops_per_thread="$OPS_PER_THREAD" --duration=$((MAX_KILL + 60)) "${sync[@]}" "${BLOB[@]}" "${EXTRA[@]}" >"$out" 2>&1 &
    pid=$!
    # Sleep in small steps so a run that exits early (a failure) is noticed.
    waited=0
    while ((waited < kill_after * 10)) && kill -0 "$pid" 2>/dev/null; do
        sleep 0.1
        waited=$((waited + 1))
    done
    if kill -0 "$pid" 2>/dev/null; then
        kill -9 "$pid"
        kills=$((kills + 1))
    fi
    { wait "$pid"; } 2>/dev/null
    rc=$?
    ops=$(grep -E '^progress: ops=' "$out" | tail -1 | sed 's/.*ops=//')
    ops=${ops:-0}
    total_ops=$((total_ops + ops))
    echo "iteration $i: seed=$seed ${sync[*]} killed after ${kill_after}s, ops>=$ops, exit $rc"
    grep '^options' "$out" | sed 's/^/  /'
    if [[ $rc -ne 137 && $rc -ne 0 ]]; then
        echo "crash_test: run $i FAILED (exit $rc):" >&2
        grep -E "FAILURE|error|panicked" "$out" | head -20 >&2
        failures=$((failures + 1))
        break
    fi
    verify "kill-$i" || break
done

if ((failures == 0)); then verify final; fi

echo "crash_test: iterations=$((i > ITERATIONS ? ITERATIONS : i)) kills=$kills ops>=$total_ops failures=$failures seed=$SEED logs=$LOG"
if ((KEEP == 0 && failures == 0)); then rm -rf "$DB" "$DB.expected" "$DB.history" "$LOG"; fi
((failures == 0))
