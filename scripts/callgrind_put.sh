#!/usr/bin/env bash
# Instruction counts per operation of a write benchmark, from callgrind
# (stable on a noisy machine, unlike time). Usage:
#   scripts/callgrind_put.sh fillrandom [num] [extra shale-bench flags...]
# Builds shale-bench with the bench-prof profile (release + symbols), runs
# the benchmark under callgrind on a fresh DB and prints Ir per operation:
# the whole program, Db::write and its main parts.
set -euo pipefail
bench=${1:-fillrandom}
num=${2:-200000}
shift $(( $# > 2 ? 2 : $# )) || true
root=$(cd "$(dirname "$0")/.." && pwd)
cargo build --quiet --profile bench-prof -p shale-bench --manifest-path "$root/Cargo.toml"
bin="${CARGO_TARGET_DIR:-$root/target}/bench-prof/shale-bench"
out=$(mktemp -d)
valgrind --tool=callgrind --callgrind-out-file="$out/cg.out" "$bin" \
  --benchmarks="$bench" --num="$num" --db="$out/db" --compression_type=none "$@" \
  >"$out/bench.log" 2>&1
callgrind_annotate --inclusive=yes "$out/cg.out" 2>/dev/null >"$out/incl.txt"
callgrind_annotate "$out/cg.out" 2>/dev/null >"$out/self.txt"
# The largest inclusive count listed for a function (inlined code is also
# listed per source file; the outermost entry is the largest).
sum_fn() {
  awk -v f="$1" -v n="$num" '
    { line=$0; sub(/^ *[0-9,]+ \([ 0-9.]+%\) +\*? */, "", line);
      sub(/ \[[^]]*\]$/, "", line); sub(/^[^:]*:/, "", line);
      if (line == f) { v=$1; gsub(",", "", v); if (v + 0 > s) s = v + 0 } }
    END { printf "%8.0f", s / n }' "$out/incl.txt"
}
total=$(awk -v n="$num" '/PROGRAM TOTALS/ {v=$1; gsub(",","",v); printf "%8.0f", v/n}' "$out/self.txt")
echo "$bench num=$num: Ir/op total $total"
for f in 'shale::db::write::commit::write' 'shale::db::write::insert::insert_batch' \
         'shale::memtable::skiplist::SkipList::insert' \
         'shale::wal::writer::LogWriter::add_record' 'malloc' 'free' \
         'shale::wal::format::CrcSeeds::record_crc'; do
  printf "  %-48s %s\n" "$f" "$(sum_fn "$f")"
done
grep -E "^fillrandom|^fillseq|^overwrite" "$out/bench.log" | head -1 || true
rm -rf "$out"
