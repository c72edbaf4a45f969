#!/usr/bin/env bash
# Create .venv (if needed) with $PYTHON (default python3) and install the project into it.
# Usage: bash scripts/setup-venv.sh [EXTRAS]   e.g. "test" installs .[test]
#
# The install is skipped when nothing it depends on changed since the last one: a stamp
# .venv/.mpdp-install-stamp.<extras> holds a hash of pyproject.toml, setup.py, the C sources of the
# compiled kernel and the Python version (the package is installed editable, so changes to its
# Python sources need no reinstall); an install without extras is satisfied by any up-to-date one.
# MPDP_REINSTALL=1 forces the install.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
EXTRAS="${1:-}"
STAMP=".venv/.mpdp-install-stamp.${EXTRAS:-base}"
KEY="$(cat pyproject.toml setup.py src/mpdp/engine/*.c src/mpdp/engine/*.h | sha256sum | cut -d' ' -f1) $(.venv/bin/python -c 'import sys; print(sys.version.split()[0])')"
up_to_date=0
for stamp in .venv/.mpdp-install-stamp.*; do
  [ -f "$stamp" ] || continue
  if [ "$(cat "$stamp")" != "$KEY" ]; then
    rm -f "$stamp"  # an install of older sources
  elif [ "$stamp" = "$STAMP" ] || [ -z "$EXTRAS" ]; then
    up_to_date=1
  fi
done
if [ "${MPDP_REINSTALL:-0}" != 1 ] && [ "$up_to_date" = 1 ]; then
  echo "setup-venv.sh: .venv is up to date (pyproject.toml, setup.py and the C sources unchanged); not reinstalling"
else
  .venv/bin/python -m pip install -q --upgrade pip
  .venv/bin/python -m pip install -q -e ".${EXTRAS:+[$EXTRAS]}"
  echo "$KEY" > "$STAMP"
fi
# The engine path this install gives (a WARNING when the optional compiled kernel did not build).
.venv/bin/python -m mpdp.engine.provenance
