#!/usr/bin/env bash
# Shale universal vs Shale leveled on one workload, alternating A B A B
# (ROUNDS rounds, the same seed per round), each run on a fresh DB in one
# process: fillrandom NUM puts, overwrite NUM puts (random keys of [0, NUM),
# unthrottled), waitforcompaction, stats. Prints every run and the
# per-style medians of: fill and overwrite ops/s, the whole run's write-amp
# (stats dump: cumulative flush + compaction GB written + WAL GB written,
# over the user bytes of both passes; compaction debt paid by
# waitforcompaction included) and space-amp after compaction (table bytes
# over live user bytes, the overwrite record's live_bytes_estimate).
#
# Usage: bench/universal_vs_leveled.sh [extra shale-bench flags]
# Environment (defaults in brackets): SHALE_BENCH
#   [$CARGO_TARGET_DIR/release/shale-bench], NUM [1000000],
#   ROUNDS [2], DB_DIR [/tmp/shale-uvl-db], OUT [/tmp/shale-uvl-<time>].
# Flags as bench/advisor_validate.sh: 16-byte keys, 100-byte values, no
# compression, bloom 10, 2 MiB memtables and tables, 8 MiB base level,
# leveled f=10 dynamic, universal size_ratio 1 and
# max_size_amplification_percent 200, trigger 4 for both.
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
SHALE_BENCH=${SHALE_BENCH:-$TARGET/release/shale-bench}
NUM=${NUM:-1000000}
ROUNDS=${ROUNDS:-2}
DB_DIR=${DB_DIR:-/tmp/shale-uvl-db}
OUT=${OUT:-/tmp/shale-uvl-$(date +%s)}
EXTRA=("$@")
mkdir -p "$OUT"

COMMON=(--engine=shale --seed=1 --key_size=16 --value_size=100 --compression_type=none
  --write_buffer_size=2097152 --max_bytes_for_level_base=8388608
  --target_file_size_base=2097152 --level_compaction_dynamic_level_bytes=true
  --num_levels=7 --bloom_bits=10 --num="$NUM")
declare -A STYLE=(
  [leveled]="--compaction_style=0 --max_bytes_for_level_multiplier=10"
  [universal]="--compaction_style=1 --universal_size_ratio=1 --universal_max_size_amplification_percent=200"
)

for round in $(seq 1 "$ROUNDS"); do
  for name in leveled universal; do
    read -r -a flags <<<"${STYLE[$name]}"
    rm -rf "$DB_DIR"
    "$SHALE_BENCH" --db="$DB_DIR" "${COMMON[@]}" "${flags[@]}" "${EXTRA[@]}" \
      --benchmarks=fillrandom,overwrite,waitforcompaction,stats \
      --json="$OUT/$name.$round.json" >"$OUT/$name.$round.log" 2>&1 || {
      echo "universal_vs_leveled.sh: $name round $round failed, see $OUT/$name.$round.log" >&2
      exit 1
    }
    echo "$name round $round done" >&2
  done
done
rm -rf "$DB_DIR"

python3 - "$OUT" "$ROUNDS" <<'PY'
import json, os, statistics, sys
out, rounds = sys.argv[1], int(sys.argv[2])
UNIT = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}

def dump(log):
    """The last stats dump: (table bytes, flush + compaction bytes written, WAL bytes written)."""
    size = comp = wal = None
    for line in open(log):
        t = line.split()
        if t[:1] == ["Sum"] and len(t) > 8:
            size = float(t[2]) * UNIT.get(t[3], 1)
        elif line.startswith("Cumulative compaction:"):
            comp = float(t[2]) * UNIT["GB"]
        elif line.startswith("Cumulative WAL:"):
            wal = float(line.split("written: ")[1].split()[0]) * UNIT["GB"]
    return size, comp, wal

print("%-10s %5s %10s %10s %8s %9s" % ("style", "round", "fill op/s", "ovw op/s", "w-amp", "space-amp"))
med = {}
for name in ("leveled", "universal"):
    rows = []
    for r in range(1, rounds + 1):
        rec = [json.loads(l) for l in open(os.path.join(out, "%s.%d.json" % (name, r))) if l.strip()]
        fill = next(x for x in rec if x["benchmark"] == "fillrandom")
        ow = next(x for x in rec if x["benchmark"] == "overwrite")
        size, comp, wal = dump(os.path.join(out, "%s.%d.log" % (name, r)))
        wa = (comp + wal) / (fill["user_bytes_written"] + ow["user_bytes_written"])
        row = (fill["ops_per_sec"], ow["ops_per_sec"], wa, size / ow["live_bytes_estimate"])
        rows.append(row)
        print("%-10s %5d %10.0f %10.0f %8.2f %9.3f" % ((name, r) + row))
    med[name] = [statistics.median(c) for c in zip(*rows)]
print()
for name, m in med.items():
    print("%-10s median %10.0f %10.0f %8.2f %9.3f" % ((name,) + tuple(m)))
PY
