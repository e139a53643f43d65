#!/usr/bin/env bash
# Builds the Python wheel, installs it into a virtual environment and runs
# the binding's tests: the pytest suite (tests/) and mypy's stubtest, which
# checks the type stubs (python/shale/__init__.pyi) against the built module.
#
# Needs python3 (>= 3.9) with the venv module and Rust; fetches maturin,
# pytest and mypy from PyPI into the environment.
# Environment: VENV [<repo>/target/py-venv], WHEELS [<repo>/target/wheels].
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
repo=$(cd "$here/../.." && pwd)
VENV=${VENV:-$repo/target/py-venv}
WHEELS=${WHEELS:-$repo/target/wheels}

if [ ! -x "$VENV/bin/python" ]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q --disable-pip-version-check 'maturin>=1.5,<2' 'pytest>=7' 'mypy>=1.18'
rm -rf "$WHEELS"
"$VENV/bin/maturin" build --release --manifest-path "$here/Cargo.toml" -i "$VENV/bin/python" -o "$WHEELS"
"$VENV/bin/pip" install -q --disable-pip-version-check --force-reinstall --no-deps "$WHEELS"/shale_db-*.whl
(cd "$here" && "$VENV/bin/python" -m mypy.stubtest shale)
(cd "$here" && "$VENV/bin/python" -m pytest -q tests)
