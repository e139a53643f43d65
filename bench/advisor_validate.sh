#!/usr/bin/env bash
# Predicted vs measured write-amp and space-amp of `shale advise`'s model.
# Per configuration below, on a fresh DB, two shale-bench processes:
#   1. filluniquerandom,waitforcompaction: every key of [0, num) once, in
#      random order, compaction finished (so the live data is exactly num
#      keys, which the second process assumes with --use_existing_db);
#   2. --use_existing_db: overwrite twice (WRITES random overwrites each,
#      about a quarter of the DB, capped at RATE bytes/s so compaction keeps
#      up), then waitforcompaction and stats. The first pass is a warm-up:
#      after the fill the upper levels are below their targets and would
#      soak up the first overwrites; the second pass, measured, starts from
#      levels at their targets (a steady state).
# `shale advise --bench FILE --json` predicts the last overwrite
# record's configuration from its flags. Measured:
#   - write-amp: the last overwrite record's engine_write_amp (WAL + flush +
#     compaction bytes written while it ran, per user byte; exact counters),
#     and per level (level_write_amp);
#   - space-amp: table bytes once compaction is done (stats dump, Sum Size)
#     over live user bytes (num x (key + value)).
#
# Usage: bench/advisor_validate.sh [extra shale-bench flags]
# Environment (defaults in brackets): SHALE_BENCH
#   [$CARGO_TARGET_DIR/release/shale-bench], SHALE [.../release/shale],
#   DB_DIR [/tmp/shale-advisor-db], OUT [/tmp/shale-advisor-<time>],
#   ONLY [all; keep configurations whose name contains it], RATE [1572864],
#   PASSES [2; overwrite passes, the first ones warm-ups].
# Build first: cargo build --release -p shale-cli -p shale-bench.
# Sizes: ~250-270 MB of live tables, 2 MiB memtables and tables, 8 MiB base
# level: 4 or more levels (L0 included); about 2 minutes per configuration.
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
SHALE_BENCH=${SHALE_BENCH:-$TARGET/release/shale-bench}
SHALE=${SHALE:-$TARGET/release/shale}
DB_DIR=${DB_DIR:-/tmp/shale-advisor-db}
OUT=${OUT:-/tmp/shale-advisor-$(date +%s)}
ONLY=${ONLY:-}
RATE=${RATE:-1572864}
PASSES=${PASSES:-2}
OVERWRITES=$(printf 'overwrite,%.0s' $(seq 1 "$PASSES"))
EXTRA=("$@")
mkdir -p "$OUT"

COMMON=(--engine=shale --seed=1 --key_size=16 --compression_type=none
  --write_buffer_size=2097152 --max_bytes_for_level_base=8388608
  --target_file_size_base=2097152 --level_compaction_dynamic_level_bytes=true
  --num_levels=7 --bloom_bits=10)
V100="--value_size=100 --num=2000000|500000"
V1K="--value_size=1024 --num=250000|60000"

# name | flags | overwrites. One line per configuration (db_bench's flag names).
U="--compaction_style=1 --universal_max_size_amplification_percent=200"
CONFIGS=(
  "leveled-f4-v100|--max_bytes_for_level_multiplier=4 $V100"
  "leveled-f10-v100|--max_bytes_for_level_multiplier=10 $V100"
  "leveled-f16-v100|--max_bytes_for_level_multiplier=16 $V100"
  "leveled-f4-v1k|--max_bytes_for_level_multiplier=4 $V1K"
  "leveled-f10-v1k|--max_bytes_for_level_multiplier=10 $V1K"
  "leveled-f16-v1k|--max_bytes_for_level_multiplier=16 $V1K"
  "universal-r1-v100|$U --universal_size_ratio=1 $V100"
  "universal-r10-v100|$U --universal_size_ratio=10 $V100"
  "universal-r1-v1k|$U --universal_size_ratio=1 $V1K"
  "universal-r10-v1k|$U --universal_size_ratio=10 $V1K"
)

for c in "${CONFIGS[@]}"; do
  IFS='|' read -r name flagtext writes <<<"$c"
  read -r -a flags <<<"$flagtext"
  [[ -n $ONLY && $name != *"$ONLY"* ]] && continue
  rm -rf "$DB_DIR" "$OUT/$name.json"
  start=$(date +%s)
  "$SHALE_BENCH" --db="$DB_DIR" "${COMMON[@]}" "${flags[@]}" "${EXTRA[@]}" \
    --benchmarks=filluniquerandom,waitforcompaction >"$OUT/$name.fill.log" 2>&1 &&
    "$SHALE_BENCH" --db="$DB_DIR" "${COMMON[@]}" "${flags[@]}" "${EXTRA[@]}" \
      --use_existing_db=true --benchmark_write_rate_limit="$RATE" --writes="$writes" \
      --benchmarks="${OVERWRITES}waitforcompaction,stats" --json="$OUT/$name.json" \
      >"$OUT/$name.log" 2>&1 || {
    echo "advisor_validate.sh: $name failed, see $OUT/$name.log" >&2
    exit 1
  }
  "$SHALE" advise --bench "$OUT/$name.json" --json >"$OUT/$name.advise.json"
  echo "$name done in $(($(date +%s) - start))s" >&2
done

python3 - "$OUT" <<'PY'
import glob, json, os, re, sys
out = sys.argv[1]
UNIT = {"B": 1, "KB": 1 << 10, "MB": 1 << 20, "GB": 1 << 30, "TB": 1 << 40}

def last_dump(log):
    """The last stats dump: (Sum Write bytes, Sum Size bytes, WAL bytes)."""
    res = None
    for line in open(log):
        t = line.split()
        if t[:1] == ["Sum"] and len(t) > 8:
            res = [float(t[8]) * (1 << 30), float(t[2]) * UNIT.get(t[3], 1), 0.0]
        elif res is not None and line.startswith("Cumulative WAL:"):
            res[2] = float(re.search(r"written: ([0-9.]+) GB", line).group(1)) * (1 << 30)
    return res

fmt = lambda v, d: ("%.*f" % (d, v)) if v is not None else "n/a"
err = lambda p, m: ("%+.0f%%" % ((p - m) / m * 100)) if m else "n/a"
rows = []
for f in sorted(glob.glob(os.path.join(out, "*.advise.json"))):
    name = os.path.basename(f)[: -len(".advise.json")]
    rec = [json.loads(l) for l in open(os.path.join(out, name + ".json")) if l.strip()]
    ows = [r for r in rec if r["benchmark"] == "overwrite"]
    ow = ows[-1]
    # Every pass's write-amp, and all passes together (bytes over bytes).
    passes = [r["engine_write_amp"] for r in ows]
    total = sum(r["engine_write_amp"] * r["user_bytes_written"] for r in ows)
    all_passes = total / sum(r["user_bytes_written"] for r in ows)
    d = last_dump(os.path.join(out, name + ".log"))
    space = d[1] / ow["live_bytes_estimate"] if d else None
    r = json.load(open(f))["runs"][-1]
    rows.append((name, r, space, passes, all_passes))

print("write-amp: device bytes (WAL + flush + compaction) per user byte; space-amp: table bytes / live user bytes")
print("(wa meas: the last overwrite pass; all passes: every pass together, err against it)")
print("%-17s %7s %8s %6s | %7s %8s %6s | %s" % ("configuration", "wa pred", "wa meas", "err",
      "sa pred", "sa meas", "err", "passes / all passes / err"))
for name, r, space, passes, all_passes in rows:
    p, m = r["predicted"], r["measured"]
    print("%-17s %7.2f %8s %6s | %7.3f %8s %6s | %s / %.2f / %s" % (name, p["write_amp"],
          fmt(m["write_amp"], 2), err(p["write_amp"], m["write_amp"]), p["space_amp_tables"],
          fmt(space, 3), err(p["space_amp_tables"], space),
          " ".join("%.2f" % x for x in passes), all_passes, err(p["write_amp"], all_passes)))
print("\nper level (bytes written into the level per user byte while the measured overwrite ran): predicted/measured")
for name, r, *_ in rows:
    p = r["predicted"]["level_write_amp"]; m = r["measured"]["level_write_amp"] or []
    n = max(len(p), len(m))
    g = lambda v, i: v[i] if i < len(v) else 0.0
    cells = ["L%d %.2f/%.2f" % (i, g(p, i), g(m, i)) for i in range(n) if g(p, i) > 0 or g(m, i) > 0.005]
    print("%-17s %s" % (name, "  ".join(cells)))
PY
