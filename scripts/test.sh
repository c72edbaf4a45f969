#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the test suite: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e ".[test]"
.venv/bin/ruff check src tests workflow notebooks benchmarks
.venv/bin/python -m pytest -q "$@"
