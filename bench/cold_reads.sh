#!/usr/bin/env bash
# Device bytes per point read on a cold page cache, advise_random_on_open on
# and off, Shale beside RocksDB (docs/perf/io.md, "IO control"). Needs
# root (drops the page cache before each run).
#
# Build first:  CARGO_TARGET_DIR=<dir> cargo build --release -p shale-bench --features rocksdb
# Usage:        BIN=<dir>/release/shale-bench bench/cold_reads.sh [ROUNDS] [DIR]
set -euo pipefail
bin=${BIN:?set BIN to a shale-bench built with --features rocksdb}
rounds=${1:-3}
dir=${2:-/tmp/shale-cold-reads}
mkdir -p "$dir"
flags=(--num=10000000 --cache_size=67108864 --bloom_bits=10 --compression_type=lz4)
for engine in shale rocksdb; do
  db=$dir/db-$engine
  [ -d "$db" ] || "$bin" --engine="$engine" --benchmarks=fillrandom "${flags[@]}" --db="$db" 2>/dev/null | grep -a '^Summary'
  # Point reads measured while compactions run would count their reads too.
  "$bin" --engine="$engine" --benchmarks=waitforcompaction --use_existing_db=1 "${flags[@]}" --db="$db" >/dev/null 2>&1
done
for round in $(seq "$rounds"); do
  for run in shale:1 shale:0 rocksdb:1 rocksdb:0; do
    engine=${run%%:*} advise=${run##*:}
    sync
    echo 3 > /proc/sys/vm/drop_caches
    printf 'r%s %s advise=%s ' "$round" "$engine" "$advise"
    "$bin" --engine="$engine" --benchmarks=readrandom --use_existing_db=1 --reads=100000 "${flags[@]}" \
      --advise_random_on_open="$advise" --db="$dir/db-$engine" 2>/dev/null | grep -a '^Summary' |
      grep -o 'ops/sec=[0-9]*\|read_B/op=[0-9.]*' | paste -sd' '
  done
done
