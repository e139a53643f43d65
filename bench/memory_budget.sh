#!/usr/bin/env bash
# One memory budget beside RocksDB (docs/perf/memory.md, "One memory budget"):
# per budget and engine, 10M fillrandom then 60 s readwhilewriting on that DB,
# each step a fresh process (peak RSS per step), engines alternating.
#
# Build first:  CARGO_TARGET_DIR=<dir> cargo build --release -p shale-bench --features rocksdb
# Usage:        BIN=<dir>/release/shale-bench bench/memory_budget.sh [ROUNDS] [DIR]
set -euo pipefail
bin=${BIN:?set BIN to a shale-bench built with --features rocksdb}
rounds=${1:-2}
dir=${2:-/tmp/shale-memory-budget}
mkdir -p "$dir"
for round in $(seq "$rounds"); do
  for budget in 67108864 536870912; do
    for engine in shale rocksdb; do
      tag=$engine-$((budget >> 20))-r$round
      db=$dir/db-$tag
      flags=(--engine="$engine" --num=10000000 --memory_budget="$budget" --cache_size="$budget"
        --bloom_bits=10 --cache_index_and_filter_blocks=1 --compression_type=lz4 --db="$db")
      echo "== $tag"
      "$bin" --benchmarks=fillrandom --json="$dir/$tag-fill.json" "${flags[@]}" 2>/dev/null | grep -a '^Summary'
      "$bin" --benchmarks=readwhilewriting --use_existing_db=1 --duration=60 \
        --json="$dir/$tag-rww.json" "${flags[@]}" 2>/dev/null | grep -a '^Summary'
      rm -rf "$db"
    done
  done
done
