#!/usr/bin/env bash
# IO-bound steps beside RocksDB (docs/perf/io.md, "IO-bound"): the
# seeds' iobuf and iodir set-ups scaled to this machine. A DB of NUM keys of
# VALUE bytes (default 13M x 400 B, 5.4 GB uncompressed), a block cache of
# 10% of it, and the process confined by a memory cgroup (v1) to a quarter
# of the DB size, engine and page cache together, so reads reach the device
# (with 24 GiB of RAM a dropped page cache would otherwise refill with the
# whole DB within a step). iobuf: buffered IO; iodir: O_DIRECT for reads,
# flush and compaction. Per round, set-up and engine, one process runs
# waitforcompaction then the timed steps; engines alternate. Besides the
# Summary lines, prints the device's average read request size (iostat's
# rareqsz, from /proc/diskstats) over each process. Needs root (cgroup,
# drop_caches).
#
# Build first:  CARGO_TARGET_DIR=<dir> cargo build --release -p shale-bench --features rocksdb
# Usage:        BIN=<dir>/release/shale-bench bench/io_bound.sh [ROUNDS] [DIR]
#               SETUPS="iobuf iodir" STEPS=... (empty: only the paced run below) DURATION=30 NUM=... VALUE=... to change the defaults
# ENGINES (default "shale rocksdb"): the order within a round (alternate
# with "rocksdb shale" for B A rounds); FIRST_ROUND numbers the rounds'
# JSON files from there (default 1). A run killed (e.g. by the cgroup's
# OOM killer) is reported and the script goes on.
# SHALE_FLAGS: extra flags for the Shale runs only (fill included), e.g.
# "--block_align=1" (aligned data blocks; the rocksdb crate cannot set it).
# STEP_FLAGS: extra flags for both engines' step runs (not the fill), e.g.
# "--writes=4000000" with DURATION=0 and STEPS=overwrite,waitforcompaction:
# the same writes for both engines, and the compaction debt they leave
# paid inside the run (sustained rate = writes / the process wall time
# printed after each run, when its leading waitforcompaction finds
# nothing to do).
# RWW_LIMIT (bytes/s, default 2 MiB; 0 skips it): after the steps, a second
# process runs readwhilewriting with the writer paced at that rate
# (db_bench's --benchmark_write_rate_limit, as RocksDB's benchmark.sh runs
# it): unpaced, a faster writer makes more compaction IO and so slows the
# measured reads.
set -euo pipefail
bin=${BIN:?set BIN to a shale-bench built with --features rocksdb}
rounds=${1:-2}
dir=${2:-/tmp/shale-io-bound}
setups=${SETUPS:-iobuf iodir}
steps=${STEPS-readrandom,seekrandom,readwhilewriting,overwrite}
duration=${DURATION:-30}
rww_limit=${RWW_LIMIT:-2097152}
num=${NUM:-13000000}
value=${VALUE:-400}
raw=$((num * (value + 16)))
cache=$((raw / 10))
limit=$((raw / 4))
mkdir -p "$dir"
cg=/sys/fs/cgroup/memory/shale-io-bound
mkdir -p "$cg"
echo "$limit" > "$cg/memory.limit_in_bytes"
dev=$(basename "$(df --output=source "$dir" | tail -1)")
common=(--num="$num" --value_size="$value" --key_size=16 --compression_type=none --bloom_bits=10
  --compaction_readahead_size=2097152
  --cache_size="$cache" --max_background_jobs=2)
echo "DB ~$((raw >> 20)) MiB raw, cache $((cache >> 20)) MiB, cgroup limit $((limit >> 20)) MiB, device $dev" \
  "max_sectors_kb $(cat /sys/block/"$dev"/queue/max_sectors_kb 2>/dev/null || echo '?')"

# Device reads: (requests, sectors) from /proc/diskstats.
reads() { awk -v d="$dev" '$3 == d { print $4, $6 }' /proc/diskstats; }

# Extra flags of one engine's runs.
extra() { if [ "$1" = shale ]; then echo "${SHALE_FLAGS:-}"; fi; }
step_flags=${STEP_FLAGS:-}
for engine in shale rocksdb; do
  db=$dir/db-$engine
  if [ ! -d "$db" ]; then
    echo "== fill $engine"
    # shellcheck disable=SC2046
    "$bin" --engine="$engine" --benchmarks=fillrandom,waitforcompaction "${common[@]}" $(extra "$engine") --db="$db" \
      --json="$dir/fill-$engine.json" 2>/dev/null | grep -a '^Summary'
  fi
done
engines=${ENGINES:-shale rocksdb}
first=${FIRST_ROUND:-1}
for round in $(seq "$first" $((first + rounds - 1))); do
  for setup in $setups; do
    direct=()
    if [ "$setup" = iodir ]; then
      direct=(--use_direct_reads=1 --use_direct_io_for_flush_and_compaction=1)
    fi
    for engine in $engines; do
      tag=$engine-$setup-r$round
      if [ -n "$steps" ]; then
        echo "== $tag"
        sync
        echo 3 > /proc/sys/vm/drop_caches
        read -r r0 s0 < <(reads)
        t0=$(date +%s.%N)
        # The shell joins the cgroup, then becomes the benchmark.
        bash -c "echo \$\$ > $cg/cgroup.procs && exec \"\$0\" \"\$@\"" "$bin" --engine="$engine" \
          --benchmarks="waitforcompaction,$steps" --use_existing_db=1 --duration="$duration" \
          "${common[@]}" $(extra "$engine") $step_flags "${direct[@]}" --db="$dir/db-$engine" --json="$dir/$tag.json" 2>/dev/null |
          grep -a '^Summary' || echo "== $tag: the run failed (exit ${PIPESTATUS[0]}; killed by the cgroup's OOM killer?)"
        read -r r1 s1 < <(reads)
        echo "device reads: $((r1 - r0)) requests, avg $(((s1 - s0) * 512 / ((r1 - r0) > 0 ? (r1 - r0) : 1) / 1024)) KiB;" \
          "process wall time $(echo "$(date +%s.%N) - $t0" | bc) s"
      fi
      if [ "$rww_limit" -gt 0 ]; then
        echo "== $tag readwhilewriting, writer at $rww_limit B/s"
        sync
        echo 3 > /proc/sys/vm/drop_caches
        bash -c "echo \$\$ > $cg/cgroup.procs && exec \"\$0\" \"\$@\"" "$bin" --engine="$engine" \
          --benchmarks=waitforcompaction,readwhilewriting --use_existing_db=1 --duration="$duration" \
          --benchmark_write_rate_limit="$rww_limit" "${common[@]}" $(extra "$engine") "${direct[@]}" --db="$dir/db-$engine" \
          --json="$dir/$tag-rww-limited.json" 2>/dev/null | grep -a '^Summary' ||
          echo "== $tag readwhilewriting: the run failed (exit ${PIPESTATUS[0]})"
      fi
    done
  done
done
