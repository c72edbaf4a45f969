#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the full reproduction: every figure and
# reports/report.html. Extra arguments go to snakemake (e.g. --configfile config/smoke.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
PY="${PYTHON:-python3}"
if [ ! -x .venv/bin/python ]; then
  "$PY" -m venv .venv
fi
.venv/bin/python -m pip install -q --upgrade pip
.venv/bin/python -m pip install -q -e .
.venv/bin/snakemake --cores all "$@"
