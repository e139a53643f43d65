#!/usr/bin/env bash
# N interleaved ascending insert streams (the third seed's experiment):
# fillseq of NUM keys with --keys_per_prefix=NUM/N --prefix_size=8, so key
# v is the 8-byte prefix v % N then v: N streams, each ascending, written
# round-robin. Every memtable holds a piece of every stream; unless flush
# outputs are cut where a stream ends, every L0 file spans all streams,
# overlaps every later one, and leveled compaction rewrites it at each level.
#
# Engines, alternated A B C A B C per round on a fresh DB each:
#   shale      Shale's default (detect_insert_streams on for leveled);
#   shale-off  --detect_insert_streams=0 (one L0 file per flush, as before);
#   rocksdb    RocksDB (no partitioner: the rocksdb crate cannot set one),
#              when ROCKS_BIN is a shale-bench built with --features rocksdb.
# Each run: fillseq, waitforcompaction, stats. Prints per run and, per N and
# engine, medians of ops/s and of the compaction stats' Sum W-Amp (bytes
# written by flushes and compactions over bytes flushed: 1.0 when nothing
# is rewritten), the stall share and the table count at the end.
#
# Usage: bench/streams.sh [extra shale-bench flags]
# Environment (defaults in brackets): BIN [$CARGO_TARGET_DIR/release/shale-bench],
#   ROCKS_BIN [unset: no RocksDB runs], NS [1 2 4 8 16 32 64], NUM [10000000],
#   ROUNDS [2], ENGINES [shale shale-off, and rocksdb with ROCKS_BIN],
#   DB_DIR [/tmp/shale-streams-db], OUT [/tmp/shale-streams-<time>].
set -euo pipefail

TARGET=${CARGO_TARGET_DIR:-target}
BIN=${BIN:-$TARGET/release/shale-bench}
NS=${NS:-"1 2 4 8 16 32 64"}
NUM=${NUM:-10000000}
ROUNDS=${ROUNDS:-2}
DB_DIR=${DB_DIR:-/tmp/shale-streams-db}
OUT=${OUT:-/tmp/shale-streams-$(date +%s)}
if [ -z "${ENGINES:-}" ]; then
    ENGINES="shale shale-off"
    [ -n "${ROCKS_BIN:-}" ] && ENGINES="$ENGINES rocksdb"
fi
EXTRA=("$@")
mkdir -p "$OUT"
echo "results in $OUT"

run() { # engine N round
    local engine=$1 n=$2 round=$3 bin=$BIN extra=()
    case $engine in
        shale) ;;
        shale-off) extra=(--detect_insert_streams=0) ;;
        rocksdb) bin=$ROCKS_BIN; extra=(--engine=rocksdb) ;;
        *) echo "unknown engine $engine" >&2; exit 2 ;;
    esac
    rm -rf "$DB_DIR"
    local log="$OUT/$engine-n$n-r$round.log"
    "$bin" --db="$DB_DIR" --benchmarks=fillseq,waitforcompaction,stats --num="$NUM" \
        --compression_type=none --level_compaction_dynamic_level_bytes=1 \
        --keys_per_prefix=$((NUM / n)) --prefix_size=8 "${extra[@]}" "${EXTRA[@]}" >"$log" 2>&1
    local ops wamp stall files
    # Progress lines end in \r: the result line follows one on the same line.
    ops=$(tr '\r' '\n' <"$log" | awk '$1 == "fillseq" && $2 == ":" {print $5; exit}')
    # The W-Amp column of the last Sum row, found by its header (RocksDB
    # has a column more than Shale); a row's size takes two fields.
    wamp=$(awk '$1 == "Level" { for (i = 1; i <= NF; i++) if ($i == "W-Amp") c = i + 1 }
                $1 == "Sum" && c { w = $c } END { print w }' "$log")
    files=$(awk '$1 == "Sum" {split($2, a, "/"); print a[1]}' "$log" | tail -1)
    stall=$(grep -o 'stall%=[0-9.]*' "$log" | head -1 | cut -d= -f2)
    echo "$engine N=$n round=$round ops/s=$ops w-amp=$wamp stall%=${stall:-n/a} files=$files"
    echo "$engine $n $ops $wamp ${stall:-nan} $files" >>"$OUT/results.txt"
}

for n in $NS; do
    for round in $(seq 1 "$ROUNDS"); do
        for engine in $ENGINES; do
            run "$engine" "$n" "$round"
        done
    done
done
rm -rf "$DB_DIR"

median() { sort -g | awk '{v[NR] = $1} END {if (NR % 2) print v[(NR + 1) / 2]; else print (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
echo
echo "| N | engine | ops/s | Sum W-Amp | stall % | tables |"
echo "|---|---|---|---|---|---|"
for n in $NS; do
    for engine in $ENGINES; do
        sel() { awk -v e="$engine" -v n="$n" -v c="$1" '$1 == e && $2 == n {print $c}' "$OUT/results.txt"; }
        echo "| $n | $engine | $(sel 3 | median) | $(sel 4 | median) | $(sel 5 | median) | $(sel 6 | median) |"
    done
done
