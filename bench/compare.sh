#!/usr/bin/env bash
# Compare Shale with RocksDB on this machine, db_bench style.
#
# Runs shale-bench with --engine=rocksdb (A) and --engine=shale (B) with
# identical flags and identical seeds, alternating A B A B for ROUNDS rounds
# per step; every step is a separate process, as RocksDB's
# tools/benchmark_compare.sh does. The default sequence mirrors that script
# (DB_BENCH.md §5.4):
#   fillseq (WAL off) -> readrandom -> fwdrange (seekrandom --seek_nexts=10)
#   -> multireadrandom -> overwrite (overwritesome: num/threads/10 writes)
#   -> readwhilewriting -> fwdrangewhilewriting (writer at MB_WRITE_PER_SEC)
#   -> overwriteandwait (overwrite,waitforcompaction)
# (also available, not in the default list: readseq)
# Per step it prints the median ops/sec of each engine, the ratio B/A, and
# the B/A ratios of write-amp, DB size, peak RSS, p99 and CPU per op (from
# the --json outputs, via `shale-bench compare`), and writes OUT/<step>.svg
# overlaying every run of the step (throughput and p99 over time, write-amp
# per level; `shale-bench compare --plot`).
#
# Build first:  cargo build --release -p shale-bench --features rocksdb
# Usage:        bench/compare.sh [extra shale-bench flags...]
# Environment (defaults in brackets): BIN [target/release/shale-bench],
#   ROUNDS [3], OUT [/tmp/shale-compare-<time>], DB_DIR [/tmp/shale-compare-db],
#   NUM_KEYS [1000000], NUM_THREADS [16], DURATION_RO [65], DURATION_RW [65],
#   MB_WRITE_PER_SEC [2], CACHE_SIZE [1 GiB], STEPS [all, space-separated
#   names from the list below], SEED [time], WARM_PAGE_CACHE [1: read the
#   engine's DB files before each run, so neither engine starts with files
#   the OS has evicted (seen on this shared VM: reads from the device made a
#   run 100x slower)].
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BIN=${BIN:-$here/target/release/shale-bench}
ROUNDS=${ROUNDS:-3}
OUT=${OUT:-/tmp/shale-compare-$(date +%s)}
DB_DIR=${DB_DIR:-/tmp/shale-compare-db}
NUM_KEYS=${NUM_KEYS:-1000000}
NUM_THREADS=${NUM_THREADS:-16}
DURATION_RO=${DURATION_RO:-65}
DURATION_RW=${DURATION_RW:-65}
MB_WRITE_PER_SEC=${MB_WRITE_PER_SEC:-2}
CACHE_SIZE=${CACHE_SIZE:-$((1 << 30))}
SEED=${SEED:-$(date +%s)}
WARM_PAGE_CACHE=${WARM_PAGE_CACHE:-1}
ENGINE_A=${ENGINE_A:-rocksdb}
ENGINE_B=${ENGINE_B:-shale}
STEPS=${STEPS:-"fillseq readrandom fwdrange multireadrandom overwrite readwhilewriting fwdrangewhilewriting overwriteandwait"}
EXTRA=("$@")

if [[ ! -x "$BIN" ]]; then
  echo "compare.sh: $BIN not found; build it with: cargo build --release -p shale-bench --features rocksdb" >&2
  exit 1
fi
mkdir -p "$OUT" "$DB_DIR"

# Shared flags (benchmark.sh / benchmark_compare.sh defaults, leveled).
COMMON=(
  --num="$NUM_KEYS" --key_size=20 --value_size=400 --compression_ratio=0.5
  --block_size=8192 --cache_size="$CACHE_SIZE" --bloom_bits=10
  --compression_type=lz4 --write_buffer_size=$((32 << 20)) --max_write_buffer_number=8
  --target_file_size_base=$((32 << 20)) --max_bytes_for_level_base=$((128 << 20))
  --max_bytes_for_level_multiplier=8 --num_levels=8 --level_compaction_dynamic_level_bytes=true
  --level0_file_num_compaction_trigger=4 --level0_slowdown_writes_trigger=20
  --level0_stop_writes_trigger=30 --max_background_jobs=8
  --histogram=1 --report_interval_seconds=1 --progress_reports=false
)
WRITE_LIMIT=$((MB_WRITE_PER_SEC << 20))

step_flags() {
  case "$1" in
    fillseq) echo "--benchmarks=fillseq,stats --disable_wal=1 --threads=1" ;;
    readrandom) echo "--benchmarks=readrandom,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RO" ;;
    readseq) echo "--benchmarks=readseq,stats --use_existing_db=1 --threads=$NUM_THREADS" ;;
    fwdrange) echo "--benchmarks=seekrandom,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RO --seek_nexts=10" ;;
    multireadrandom) echo "--benchmarks=multireadrandom,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RO --batch_size=10" ;;
    overwrite) echo "--benchmarks=overwrite,stats --use_existing_db=1 --threads=$NUM_THREADS --writes=$((NUM_KEYS / NUM_THREADS / 10))" ;;
    readwhilewriting) echo "--benchmarks=readwhilewriting,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RW --benchmark_write_rate_limit=$WRITE_LIMIT" ;;
    fwdrangewhilewriting) echo "--benchmarks=seekrandomwhilewriting,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RW --seek_nexts=10 --benchmark_write_rate_limit=$WRITE_LIMIT" ;;
    overwriteandwait) echo "--benchmarks=overwrite,waitforcompaction,stats --use_existing_db=1 --threads=$NUM_THREADS --duration=$DURATION_RW" ;;
    *) echo "compare.sh: unknown step $1" >&2; return 1 ;;
  esac
}

summary="$OUT/summary.txt"
: > "$summary"
step_no=0
for step in $STEPS; do
  step_no=$((step_no + 1))
  read -r -a flags <<< "$(step_flags "$step")"
  a_files=() b_files=()
  for round in $(seq 1 "$ROUNDS"); do
    seed=$((SEED + round * 1000 + step_no))
    for engine in "$ENGINE_A" "$ENGINE_B"; do
      tag="$step.$engine.$round"
      echo "== $tag (seed $seed)" >&2
      if [[ $WARM_PAGE_CACHE == 1 && -d "$DB_DIR/$engine" ]]; then
        cat "$DB_DIR/$engine"/* > /dev/null 2>&1 || true
      fi
      "$BIN" --engine="$engine" --db="$DB_DIR/$engine" --seed="$seed" \
        --json="$OUT/$tag.json" --report_file="$OUT/$tag.r.csv" \
        "${COMMON[@]}" "${flags[@]}" "${EXTRA[@]}" > "$OUT/$tag.log" 2> "$OUT/$tag.err"
      grep -E '^(fillseq|readrandom|readseq|seekrandom|multireadrandom|overwrite|readwhilewriting|seekrandomwhilewriting) ' \
        "$OUT/$tag.log" >&2 || true
      if [[ $engine == "$ENGINE_A" && ${#a_files[@]} -lt $round ]]; then a_files+=("$OUT/$tag.json"); else b_files+=("$OUT/$tag.json"); fi
    done
  done
  a=$(IFS=,; echo "${a_files[*]}")
  b=$(IFS=,; echo "${b_files[*]}")
  {
    echo "### step $step"
    "$BIN" compare "$a" "$b" --plot "$OUT/$step.svg" | tail -n +2
    echo
  } | tee -a "$summary"
done
echo "A = $ENGINE_A, B = $ENGINE_B; ratios are B/A (ops: >1 means Shale is faster; w-amp, db size, peak rss, p99, cpu/op: <1 means Shale uses less)." | tee -a "$summary"
echo "Logs, JSON, report CSVs and a plot per step (<step>.svg) in $OUT" >&2
