#!/usr/bin/env bash
# Universal compaction with and without `incremental`, alternating
# full, incremental (ROUNDS rounds, the same seed per round) for each engine
# of ENGINES in turn, each run on a fresh DB in one process: fillrandom NUM puts, overwrite NUM puts (random
# keys of [0, NUM), unthrottled), waitforcompaction, stats. While a run
# goes, the total size of the DB's table files (*.sst) is sampled every
# 50 ms: its maximum is the run's peak space (a full merge's outputs exist
# next to its inputs until it ends). Prints every run and the per-mode
# medians of: fill and overwrite ops/s, the whole run's write-amp (as
# bench/universal_vs_leveled.sh: stats dump, flush + compaction + WAL bytes
# over the user bytes of both passes), the peak table bytes (MiB) and the
# peak over the table bytes after compaction.
#
# Usage: bench/universal_incremental.sh [extra shale-bench flags]
# Environment (defaults in brackets): SHALE_BENCH
#   [$CARGO_TARGET_DIR/release/shale-bench], NUM [1000000], ROUNDS [2],
#   ENGINES ["shale"; "shale rocksdb" needs a SHALE_BENCH built with
#   --features rocksdb, which sets RocksDB's `incremental` through
#   SetOptions after open], DB_DIR [/tmp/shale-uinc-db],
#   OUT [/tmp/shale-uinc-<time>].
# Flags as bench/universal_vs_leveled.sh's universal runs (16-byte keys,
# 100-byte values, no compression, 2 MiB memtables and tables, size_ratio
# 1, max_size_amplification_percent 200 unless given) plus
# --max_compaction_bytes=16777216 (slices of at most 16 MiB).
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
SHALE_BENCH=${SHALE_BENCH:-$TARGET/release/shale-bench}
NUM=${NUM:-1000000}
ROUNDS=${ROUNDS:-2}
DB_DIR=${DB_DIR:-/tmp/shale-uinc-db}
OUT=${OUT:-/tmp/shale-uinc-$(date +%s)}
ENGINES=${ENGINES:-shale}
EXTRA=("$@")
mkdir -p "$OUT"

COMMON=(--seed=1 --key_size=16 --value_size=100 --compression_type=none
  --write_buffer_size=2097152 --target_file_size_base=2097152 --num_levels=7 --bloom_bits=10
  --compaction_style=1 --universal_size_ratio=1 --universal_max_size_amplification_percent=200
  --max_compaction_bytes=16777216 --num="$NUM")
declare -A MODE=([full]="--universal_incremental=0" [incremental]="--universal_incremental=1")

# Prints the largest total of *.sst bytes in $1 seen every 50 ms until the
# file $2 exists.
sample_peak() {
  local peak=0 now
  while [ ! -e "$2" ]; do
    # Files vanish while find lists them (find then fails): the sum of
    # what it saw still counts.
    now=$(find "$1" -name '*.sst' -printf '%s\n' 2>/dev/null | awk '{s += $1} END {print s + 0}' || true)
    if [ "${now:-0}" -gt "$peak" ]; then peak=$now; fi
    sleep 0.05
  done
  echo "$peak"
}

names=()
for engine in $ENGINES; do names+=("$engine-full" "$engine-incremental"); done
for round in $(seq 1 "$ROUNDS"); do
  for name in "${names[@]}"; do
    read -r -a flags <<<"--engine=${name%-*} ${MODE[${name##*-}]}"
    rm -rf "$DB_DIR" "$OUT/$name.$round.done"
    mkdir -p "$DB_DIR"
    sample_peak "$DB_DIR" "$OUT/$name.$round.done" >"$OUT/$name.$round.peak" &
    sampler=$!
    status=0
    "$SHALE_BENCH" --db="$DB_DIR" "${COMMON[@]}" "${flags[@]}" "${EXTRA[@]}" \
      --benchmarks=fillrandom,overwrite,waitforcompaction,stats \
      --json="$OUT/$name.$round.json" >"$OUT/$name.$round.log" 2>&1 || status=$?
    find "$DB_DIR" -name '*.sst' -printf '%s\n' | awk '{s += $1} END {print s + 0}' >"$OUT/$name.$round.final"
    touch "$OUT/$name.$round.done"
    wait "$sampler"
    if [ "$status" -ne 0 ]; then
      echo "universal_incremental.sh: $name round $round failed, see $OUT/$name.$round.log" >&2
      exit 1
    fi
    echo "$name round $round done" >&2
  done
done
rm -rf "$DB_DIR"

python3 - "$OUT" "$ROUNDS" "${names[@]}" <<'PY'
import json, os, statistics, sys
out, rounds, names = sys.argv[1], int(sys.argv[2]), sys.argv[3:]
UNIT = {"GB": 1 << 30}

def dump(log):
    """The last stats dump: (flush + compaction bytes written, WAL bytes written)."""
    comp = wal = None
    for line in open(log):
        t = line.split()
        if line.startswith("Cumulative compaction:"):
            comp = float(t[2]) * UNIT["GB"]
        elif line.startswith("Cumulative WAL:"):
            wal = float(line.split("written: ")[1].split()[0]) * UNIT["GB"]
    return comp, wal

def num(path):
    return float(open(path).read().split()[0])

head = ("mode", "round", "fill op/s", "ovw op/s", "w-amp", "peak MiB", "final MiB", "peak/final")
print("%-20s %5s %10s %10s %7s %9s %9s %10s" % head)
med = {}
for name in names:
    rows = []
    for r in range(1, rounds + 1):
        base = os.path.join(out, "%s.%d" % (name, r))
        rec = [json.loads(l) for l in open(base + ".json") if l.strip()]
        fill = next(x for x in rec if x["benchmark"] == "fillrandom")
        ow = next(x for x in rec if x["benchmark"] == "overwrite")
        comp, wal = dump(base + ".log")
        wa = (comp + wal) / (fill["user_bytes_written"] + ow["user_bytes_written"])
        peak, final = num(base + ".peak"), num(base + ".final")
        row = (fill["ops_per_sec"], ow["ops_per_sec"], wa, peak / 2**20, final / 2**20, peak / final)
        rows.append(row)
        print("%-20s %5d %10.0f %10.0f %7.2f %9.1f %9.1f %10.2f" % ((name, r) + row))
    med[name] = [statistics.median(c) for c in zip(*rows)]
print()
for name, m in med.items():
    print("%-20s median %10.0f %10.0f %7.2f %9.1f %9.1f %10.2f" % ((name,) + tuple(m)))
PY
