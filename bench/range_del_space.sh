#!/usr/bin/env bash
# Range deletions side by side for several engines: the space a DeleteRange
# gives back, and seeks that land in a deleted key range.
#
# (a) SPACE, per engine, on a fresh DB:
#   1. fillseq NUM keys of VALUE_SIZE bytes, flush, waitforcompaction (one
#      process); the DB directory size is then the "filled" size;
#   2. deleterange over the middle 90% of the key numbers,
#      [NUM/20, NUM/20 + NUM*9/10), then flush, waitforcompaction (a second
#      process, --use_existing_db); the size after it exits is "final".
#   The directory size (du -sb: SST files plus WAL, MANIFEST, ...) is also
#   sampled every SAMPLE_SECS while both processes run; "peak" is the
#   largest size seen. Prints filled, peak, final (and its *.sst part) and
#   final/peak per engine.
# (b) SEEK OVER DELETED KEYS, for each deletion kind:
#     point: deleteseq, DEL_KEYS point Deletes of consecutive keys;
#     range: deleterange, one DeleteRange over the same keys;
#   the deleted keys are DEL_KEYS consecutive key numbers in the middle of
#   [0, NUM). Per engine: fillseq NUM keys, the deletion, flush,
#   waitforcompaction (one process); then ROUNDS rounds of seekrandom with
#   every seek drawn inside the deleted range (--seek_key_range_start/end),
#   each a separate process for SEEK_SECS seconds, engines alternating
#   A B A B. Prints every run's ops/sec, then per kind each engine's median
#   and the ratio of the last engine to every other one.
#
# deleterange and --seek_key_range_* are shale-bench's own (db_bench has
# neither); deleteseq starts at --delete_range_start (db_bench: 0).
#
# Usage:
#   ENGINES="rocksdb=/work/scratch/rocks/target/release/shale-bench shale=./target/release/shale-bench" \
#     bench/range_del_space.sh [extra shale-bench flags]
# ENGINES: space-separated engine=binary pairs (the binary must have the
#   engine's feature and the engine DeleteRange; the last pair is the one
#   compared against the others).
# Environment (defaults in brackets): NUM [8000000], VALUE_SIZE [100]
#   (8M x 116 B = about 1 GB of key+value data), DEL_KEYS [1000000, at most
#   NUM/2], ROUNDS [3], SEEK_SECS [10], SEEK_NEXTS [0], SAMPLE_SECS [1],
#   PARTS ["space seek"], DB_DIR [/tmp/shale-range-del],
#   OUT [/tmp/shale-range-del-<time>], SEED [1000].
# Default flags: 16-byte keys, no compression (the rocksdb crate build here
# lacks snappy), one thread, WAL on without sync, db_bench's other defaults.
set -euo pipefail

NUM=${NUM:-8000000}
VALUE_SIZE=${VALUE_SIZE:-100}
DEL_KEYS=${DEL_KEYS:-1000000}
ROUNDS=${ROUNDS:-3}
SEEK_SECS=${SEEK_SECS:-10}
SEEK_NEXTS=${SEEK_NEXTS:-0}
SAMPLE_SECS=${SAMPLE_SECS:-1}
PARTS=${PARTS:-"space seek"}
DB_DIR=${DB_DIR:-/tmp/shale-range-del}
OUT=${OUT:-/tmp/shale-range-del-$(date +%s)}
SEED=${SEED:-1000}
: "${ENGINES:?set ENGINES=\"engine=binary ...\" (e.g. rocksdb=... shale=...)}"
EXTRA=("$@")

if ((DEL_KEYS > NUM / 2)); then
  DEL_KEYS=$((NUM / 2))
  echo "range_del_space.sh: DEL_KEYS capped at NUM/2 = $DEL_KEYS" >&2
fi
DEL_START=$(((NUM - DEL_KEYS) / 2))
DEL_END=$((DEL_START + DEL_KEYS))
SPACE_START=$((NUM / 20))
SPACE_END=$((SPACE_START + NUM * 9 / 10))

for pair in $ENGINES; do
  bin=${pair#*=}
  if [[ ! -x $bin ]]; then
    echo "range_del_space.sh: $bin (engine ${pair%%=*}) not found or not executable" >&2
    exit 1
  fi
done
mkdir -p "$OUT" "$DB_DIR"

COMMON=(--key_size=16 --value_size="$VALUE_SIZE" --num="$NUM" --threads=1
  --compression_type=none --progress_reports=false)

# Runs one shale-bench process: run <engine> <bin> <db> <log> <seed> [flags...].
# Samples the DB directory size every SAMPLE_SECS while it runs and prints
# the largest size seen.
run() {
  local engine=$1 bin=$2 db=$3 log=$4 seed=$5
  shift 5
  "$bin" --engine="$engine" --db="$db" --seed="$seed" "${COMMON[@]}" "$@" "${EXTRA[@]}" \
    >"$log" 2>&1 &
  local pid=$! peak=0 s
  while kill -0 "$pid" 2>/dev/null; do
    s=$(du -sb "$db" 2>/dev/null | cut -f1) || true
    if [[ -n $s ]] && ((s > peak)); then peak=$s; fi
    sleep "$SAMPLE_SECS"
  done
  if ! wait "$pid"; then
    echo "range_del_space.sh: $engine failed, see $log" >&2
    exit 1
  fi
  echo "$peak"
}

dir_bytes() { du -sb "$1" | cut -f1; }
sst_bytes() { find "$1" -name '*.sst' -printf '%s\n' | awk '{s += $1} END {print s + 0}'; }

# Prints the ops/sec of the Summary line of benchmark $2 in log $1.
ops_of() { sed -n "s/^Summary $2: ops\/sec=\([0-9.]*\).*/\1/p" "$1" | tail -n 1; }

for part in $PARTS; do
  case $part in
  space)
    echo "== space: fillseq $NUM keys x $VALUE_SIZE B, then deleterange [$SPACE_START, $SPACE_END)" >&2
    for pair in $ENGINES; do
      engine=${pair%%=*}
      bin=${pair#*=}
      db="$DB_DIR/space-$engine"
      rm -rf "$db"
      p1=$(run "$engine" "$bin" "$db" "$OUT/space-fill-$engine.txt" "$SEED" \
        --benchmarks=fillseq,flush,waitforcompaction)
      filled=$(dir_bytes "$db")
      p2=$(run "$engine" "$bin" "$db" "$OUT/space-delete-$engine.txt" "$((SEED + 1))" \
        --use_existing_db=1 --benchmarks=deleterange,flush,waitforcompaction \
        --delete_range_start="$SPACE_START" --delete_range_end="$SPACE_END")
      final=$(dir_bytes "$db")
      final_sst=$(sst_bytes "$db")
      peak=$filled
      for s in "$p1" "$p2"; do
        if ((s > peak)); then peak=$s; fi
      done
      grep -E '^(fillseq|deleterange) ' "$OUT/space-fill-$engine.txt" "$OUT/space-delete-$engine.txt" >&2 || true
      echo "space $engine filled=$filled peak=$peak final=$final final_sst=$final_sst"
      echo "$engine $filled $peak $final $final_sst" >>"$OUT/space.txt"
      rm -rf "$db"
    done
    ;;
  seek)
    echo "== seek: fillseq $NUM keys, delete [$DEL_START, $DEL_END) ($DEL_KEYS keys), seekrandom into it" >&2
    for kind in point range; do
      case $kind in
      point) del=(--benchmarks=fillseq,deleteseq,flush,waitforcompaction
        --delete_range_start="$DEL_START" --deletes="$DEL_KEYS") ;;
      range) del=(--benchmarks=fillseq,deleterange,flush,waitforcompaction
        --delete_range_start="$DEL_START" --delete_range_end="$DEL_END") ;;
      esac
      for pair in $ENGINES; do
        engine=${pair%%=*}
        bin=${pair#*=}
        db="$DB_DIR/seek-$kind-$engine"
        rm -rf "$db"
        run "$engine" "$bin" "$db" "$OUT/seek-$kind-build-$engine.txt" "$SEED" "${del[@]}" >/dev/null
      done
      for round in $(seq 1 "$ROUNDS"); do
        for pair in $ENGINES; do
          engine=${pair%%=*}
          bin=${pair#*=}
          db="$DB_DIR/seek-$kind-$engine"
          log="$OUT/seek-$kind-$engine-$round.txt"
          run "$engine" "$bin" "$db" "$log" "$((SEED + round))" --use_existing_db=1 \
            --benchmarks=seekrandom --duration="$SEEK_SECS" --ops_between_duration_checks=1 \
            --seek_nexts="$SEEK_NEXTS" --seek_key_range_start="$DEL_START" \
            --seek_key_range_end="$DEL_END" >/dev/null
          ops=$(ops_of "$log" seekrandom)
          found=$(sed -n 's/.*seekrandom .*operations;.*(\(.* found\)).*/\1/p' "$log" | tail -n 1)
          echo "round $round seek-$kind $engine ops/sec=$ops ($found)"
          echo "seek-$kind $engine $ops" >>"$OUT/seek.txt"
        done
      done
      for pair in $ENGINES; do rm -rf "${DB_DIR:?}/seek-$kind-${pair%%=*}"; done
    done
    ;;
  *)
    echo "range_del_space.sh: unknown part $part (space, seek)" >&2
    exit 1
    ;;
  esac
done

python3 - "$OUT" "$ENGINES" <<'EOF'
import os, statistics, sys
out, engines = sys.argv[1], [p.split("=")[0] for p in sys.argv[2].split()]
last = engines[-1]
mib = lambda b: "%.1f MiB" % (b / 1048576)
space = os.path.join(out, "space.txt")
if os.path.exists(space):
    print("\nspace: DB directory size (du -sb) after the fill, largest seen, after the deleterange")
    print("%-10s %12s %12s %12s %12s %10s" % ("engine", "filled", "peak", "final", "final .sst", "final/peak"))
    for l in open(space):
        e, filled, peak, final, sst = l.split()
        filled, peak, final, sst = int(filled), int(peak), int(final), int(sst)
        print("%-10s %12s %12s %12s %12s %10.3f" % (e, mib(filled), mib(peak), mib(final), mib(sst), final / peak))
seek = os.path.join(out, "seek.txt")
if os.path.exists(seek):
    rows = [l.split() for l in open(seek)]
    print("\nseek into the deleted keys: median seekrandom ops/sec, and %s / each other engine" % last)
    for kind in dict.fromkeys(r[0] for r in rows):
        med = {e: statistics.median(float(r[2]) for r in rows if r[0] == kind and r[1] == e) for e in engines}
        cells = ["%s %.0f" % (e, med[e]) for e in engines]
        ratios = ["%s/%s %.2f" % (last, e, med[last] / med[e]) for e in engines[:-1] if med[e] > 0]
        print("%-11s %s | %s" % (kind, "  ".join(cells), "  ".join(ratios)))
EOF
echo "Logs in $OUT" >&2
