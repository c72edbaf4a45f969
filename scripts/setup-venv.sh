#!/usr/bin/env bash
# Create .venv (if needed) with $PYTHON (default python3) and install the project into it.
# Usage: bash scripts/setup-venv.sh [EXTRAS]   e.g. "test" installs .[test]
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".${1:+[$1]}"
# The engine path this install gives (a WARNING when the optional compiled kernel did not build).
.venv/bin/python -m mpdp.engine.provenance
