#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the full reproduction: every figure and
# reports/report.html. Extra arguments go to snakemake (e.g. --configfile config/smoke.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
# Which engine path training takes (a WARNING when the compiled kernel is missing or unusable:
# tables then agree with the fused path's only to rounding, docs/engine.md).
.venv/bin/python -m mpdp.engine.provenance
.venv/bin/snakemake --cores all "$@"
