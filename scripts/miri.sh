#!/usr/bin/env bash
# Miri over the engine's unsafe code: the memtable (arena, lock-free skip
# list, the memtable over them) and the clock block cache, through their
# unit tests (the bloom filter has no unsafe and its false-positive test is
# too slow under Miri: `scripts/miri.sh memtable::bloom` runs it). Reports
# undefined behaviour, data races and leaks the ordinary tests cannot see.
# Not in CI (Miri runs these tests ~100-1000x slower than native); run it
# after touching those modules. Figures of the last run: docs/RELIABILITY.md.
#
# Needs the nightly toolchain with the miri and rust-src components:
#   rustup toolchain install nightly --profile minimal -c miri,rust-src
# Extra arguments go to the test binary (e.g. a narrower filter:
#   scripts/miri.sh memtable::skiplist).
set -euo pipefail
cd "$(dirname "$0")/.."

if ! cargo +nightly miri --version >/dev/null 2>&1; then
  echo "scripts/miri.sh: needs 'rustup toolchain install nightly --profile minimal -c miri,rust-src'" >&2
  exit 2
fi
cargo +nightly miri setup >/dev/null

filters=("$@")
if [ ${#filters[@]} -eq 0 ]; then
  filters=(memtable::arena memtable::skiplist memtable::tests cache::clock::)
fi
# Isolation stays on (no host clock or environment), so the randomized
# tests take their seed from SHALE_SEED, forwarded explicitly (default 1;
# pass another to explore). parking_lot (used by the caches) casts integers
# to pointers internally; permissive provenance accepts that without the
# warning.
export SHALE_SEED="${SHALE_SEED:-1}"
MIRIFLAGS="${MIRIFLAGS:-} -Zmiri-permissive-provenance -Zmiri-env-forward=SHALE_SEED" \
  cargo +nightly miri test -p shale --lib -- "${filters[@]}"
