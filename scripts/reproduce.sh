#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the full reproduction: every figure and
# reports/report.html. Extra arguments go to snakemake (e.g. --configfile config/smoke.yaml).
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh
.venv/bin/snakemake --cores all "$@"
