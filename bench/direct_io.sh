#!/usr/bin/env bash
# Direct IO (use_direct_reads + use_direct_io_for_flush_and_compaction) on
# and off: a 2M-key fillrandom, compactions waited for, then readrandom with
# an 8 MiB block cache on the page cache the fill left (not dropped), so the
# difference is what bypassing the page cache costs and where reads go
# (read_B/op: the process's read_bytes from /proc/self/io, i.e. bytes that
# reached the device). docs/perf/io.md, "Direct IO".
#
# Build first:  CARGO_TARGET_DIR=<dir> cargo build --release -p shale-bench
# Usage:        BIN=<dir>/release/shale-bench bench/direct_io.sh [ROUNDS] [DIR]
set -euo pipefail
bin=${BIN:?set BIN to a release shale-bench}
rounds=${1:-2}
dir=${2:-/tmp/shale-direct-io}
flags=(--num=2000000 --reads=300000 --cache_size=8388608 --bloom_bits=10 --compression_type=lz4)
for round in $(seq "$rounds"); do
  for direct in 0 1; do
    rm -rf "$dir"
    mkdir -p "$dir"
    for bench in fillrandom waitforcompaction readrandom; do
      existing=$([ "$bench" = fillrandom ] && echo 0 || echo 1)
      if [ "$bench" = waitforcompaction ]; then
        "$bin" --benchmarks="$bench" --use_existing_db=1 "${flags[@]}" \
          --use_direct_reads="$direct" --use_direct_io_for_flush_and_compaction="$direct" \
          --db="$dir/db" >/dev/null 2>&1
        continue
      fi
      printf 'r%s direct=%s %s ' "$round" "$direct" "$bench"
      "$bin" --benchmarks="$bench" --use_existing_db="$existing" "${flags[@]}" \
        --use_direct_reads="$direct" --use_direct_io_for_flush_and_compaction="$direct" \
        --db="$dir/db" 2>/dev/null | grep -a '^Summary' |
        grep -o 'ops/sec=[0-9]*\|read_B/op=[0-9.]*\|write_B/op=[0-9.]*' | paste -sd' '
    done
  done
done
rm -rf "$dir"
