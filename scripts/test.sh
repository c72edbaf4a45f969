#!/usr/bin/env bash
# Set up a virtual environment (if needed) and run the test suite: the README's test command.
set -euo pipefail
cd "$(dirname "$0")/.."
bash scripts/setup-venv.sh test,slurm   # slurm: the executor plugin for tests/slurm
.venv/bin/ruff check src tests workflow notebooks perf
# Two workers (MPDP_TEST_WORKERS; 0 runs in this process): the suite alone keeps one core busy
# on average (it waits on Snakemake runs, Slurm and dry runs), so two share two cores. A test
# file runs in one worker (--dist loadfile), so module fixtures are built once.
.venv/bin/python -m pytest -q -n "${MPDP_TEST_WORKERS:-2}" --dist loadfile "$@"
