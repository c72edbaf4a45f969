#!/usr/bin/env bash
# Run by Snakemake inside the new job environment (workflow/envs/mpdp.yaml) right after
# creating it: install the mpdp package from the workflow's checkout, editable (source
# changes reach the jobs without rebuilding the environment) and without dependencies (the
# environment file pins those). MPDP_SOURCE_DIR is the folder of the Snakefile.
set -euo pipefail
source_dir="${MPDP_SOURCE_DIR:?MPDP_SOURCE_DIR is not set: create job environments through the workflow (snakemake --sdm conda)}"
if [ ! -f "$source_dir/pyproject.toml" ]; then
  echo "mpdp: $source_dir has no pyproject.toml; cannot install the mpdp package" >&2
  exit 1
fi
python -m pip install --no-deps --no-build-isolation --disable-pip-version-check -e "$source_dir"
