#!/usr/bin/env bash
# Device bytes per point read on a cold page cache with aligned data blocks
# (--block_align, Shale only) and without, beside RocksDB (unaligned: the
# rocksdb crate cannot set block_align). Uncompressed 4 KiB blocks (the
# option needs no compression), 400-byte values, 10 bloom bits, 64 MiB
# block cache; compactions waited for; then per run the page cache dropped
# and 100K readrandom. Prints ops/s, read_B/op (the process's read_bytes
# from /proc/self/io: what the device delivered, kernel readahead
# included) and block_reads/op. Needs root (drop_caches).
# docs/perf/io.md, "Aligned data blocks".
#
# Build first:  CARGO_TARGET_DIR=<dir> cargo build --release -p shale-bench --features rocksdb
# Usage:        BIN=<dir>/release/shale-bench bench/block_align.sh [ROUNDS] [DIR]
# Environment:  NUM [5000000] keys.
set -euo pipefail
bin=${BIN:?set BIN to a shale-bench built with --features rocksdb}
rounds=${1:-3}
dir=${2:-/tmp/shale-block-align}
num=${NUM:-5000000}
mkdir -p "$dir"
flags=(--num="$num" --value_size=400 --cache_size=67108864 --bloom_bits=10 --compression_type=none)
# name:engine:extra flags
runs=("shale-aligned:shale:--block_align=1" "shale:shale:--block_align=0" "rocksdb:rocksdb:")
for run in "${runs[@]}"; do
  IFS=: read -r name engine extra <<<"$run"
  db=$dir/db-$name
  [ -d "$db" ] || "$bin" --engine="$engine" --benchmarks=fillrandom "${flags[@]}" $extra --db="$db" 2>/dev/null |
    grep -a '^Summary' | grep -o 'ops/sec=[0-9]*\|db_size=[0-9.]*MiB' | paste -sd' ' | sed "s/^/fill $name /"
  "$bin" --engine="$engine" --benchmarks=waitforcompaction --use_existing_db=1 "${flags[@]}" $extra --db="$db" >/dev/null 2>&1
  du -sb "$db" | awk -v n="$name" '{printf "size %s %.1f MiB\n", n, $1/1048576}'
done
for round in $(seq "$rounds"); do
  for run in "${runs[@]}"; do
    IFS=: read -r name engine extra <<<"$run"
    sync
    echo 3 > /proc/sys/vm/drop_caches
    printf 'r%s %s ' "$round" "$name"
    "$bin" --engine="$engine" --benchmarks=readrandom --use_existing_db=1 --reads=100000 "${flags[@]}" $extra \
      --db="$dir/db-$name" 2>/dev/null | grep -a '^Summary' |
      grep -o 'ops/sec=[0-9]*\|read_B/op=[0-9.]*\|block_reads/op=[0-9.]*' | paste -sd' '
  done
done
