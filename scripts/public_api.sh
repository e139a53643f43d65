#!/usr/bin/env bash
# The public API of crate `shale` at two commits, and their diff (default
# features; test-only surfaces behind feature `testing` are not public).
# Installs cargo-public-api (it needs a nightly toolchain for rustdoc JSON;
# rustup installs one if missing). Usage:
#   scripts/public_api.sh <old-rev> [<new-rev>, default HEAD]
set -euo pipefail
old=${1:?usage: scripts/public_api.sh <old-rev> [new-rev]}
new=${2:-HEAD}
root=$(cd "$(dirname "$0")/.." && pwd)
command -v cargo-public-api >/dev/null 2>&1 || cargo install cargo-public-api --locked
rustup toolchain list | grep -q '^nightly' || rustup toolchain install nightly --profile minimal
out=$(mktemp -d)
for rev in "$old" "$new"; do
  git -C "$root" worktree add --detach "$out/src" "$rev" >/dev/null 2>&1
  (cd "$out/src" && CARGO_TARGET_DIR="$out/target" cargo public-api -p shale -sss) >"$out/$(echo "$rev" | tr '/' '_').txt"
  git -C "$root" worktree remove --force "$out/src"
done
diff -u "$out/$(echo "$old" | tr '/' '_').txt" "$out/$(echo "$new" | tr '/' '_').txt" || true
rm -rf "$out"
