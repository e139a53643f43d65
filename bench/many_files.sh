#!/usr/bin/env bash
# A DB of 10,000+ SSTs opened and read in full under `ulimit -n 256`: the
# proof that max_open_files bounds the table files Shale keeps open.
#
# Steps (each a separate process, crates/shale/examples/many_files.rs):
#   1. build  under ulimit -n 256, max_open_files=200: write KEYS keys in a
#      scattered order with 8 KiB target files; wait for compaction;
#   2. verify under ulimit -n 256, max_open_files=200: reopen (paranoid
#      checks open every table once), get every key, scan every key;
#   3. verify under ulimit -n 256, max_open_files=-1: expected to fail with
#      "Too many open files" (every table stays open), as RocksDB would;
#   4. verify without the ulimit, max_open_files=-1: the unbounded figures
#      (RSS, open descriptors) for comparison.
# Prints each step's output and /usr/bin/time's wall time and peak RSS.
#
# Usage: bench/many_files.sh   (builds the example in release mode)
# Environment: KEYS [800000, about 11,000 SSTs], DIR [/tmp/shale-many-files],
#   LIMIT [256], MAX_OPEN_FILES [200], KEEP [0: delete DIR at the end].
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
KEYS=${KEYS:-800000}
DIR=${DIR:-/tmp/shale-many-files}
LIMIT=${LIMIT:-256}
MOF=${MAX_OPEN_FILES:-200}

cargo build --release -q -p shale --example many_files --manifest-path "$here/Cargo.toml"
target=${CARGO_TARGET_DIR:-$here/target}
bin="$target/release/examples/many_files"

timed() { /usr/bin/time -f "  (wall %e s, peak RSS %M KiB)" "$@"; }

rm -rf "$DIR"
echo "== 1. build: $KEYS keys, max_open_files=$MOF, ulimit -n $LIMIT"
(ulimit -n "$LIMIT" && timed "$bin" build "$DIR" "$KEYS" "$MOF")
echo "== 2. verify: max_open_files=$MOF, ulimit -n $LIMIT"
(ulimit -n "$LIMIT" && timed "$bin" verify "$DIR" "$KEYS" "$MOF")
echo "== 3. verify: max_open_files=-1, ulimit -n $LIMIT (expected to fail)"
if (ulimit -n "$LIMIT" && timed "$bin" verify "$DIR" "$KEYS" -1); then
    echo "  unexpected: the unbounded table cache fit in $LIMIT descriptors"
fi
echo "== 4. verify: max_open_files=-1, no ulimit (ulimit -n $(ulimit -n))"
timed "$bin" verify "$DIR" "$KEYS" -1
[ "${KEEP:-0}" = 1 ] || rm -rf "$DIR"
