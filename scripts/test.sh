#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the test suite: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh test,slurm   # slurm: the executor plugin for tests/slurm
.venv/bin/ruff check src tests workflow notebooks perf
.venv/bin/python -m pytest -q "$@"
