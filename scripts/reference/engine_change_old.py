"""Issue 55 item 7 (docs/claims.md "What the three-sided engine changed"): run the claims engine of commit
20e3d95 (before issue 55) on a build's tables; usage: PYTHONPATH=<worktree of 20e3d95>/src CFG_JSON=<validated config as
JSON> python scripts/reference/engine_change_old.py BUILD OUT STUDY."""
import json
import os
import sys
from pathlib import Path

build_dir = Path(sys.argv[1]); out = Path(sys.argv[2]); study = sys.argv[3]
os.chdir(build_dir)
cfg = json.load(open(os.environ.get("CFG_JSON", "/tmp/change55/cfg.json")))
from mpdp.claims import tables
from mpdp.studies import registry
from mpdp.studies.claims_build import Paths, build

available = [d for d in cfg["datasets"] if (build_dir / f"data/processed/{d}/card.json").is_file()]
paths = Paths({s.id: (list(s.tables(cfg, available)) if s.id == study else []) for s in registry.STUDIES},
              cards={d: f"data/processed/{d}/card.json" for d in available})
cells, verdicts = build(paths, cfg)
out.mkdir(parents=True, exist_ok=True)
tables.write(cells, out / "cells.parquet"); tables.write(verdicts, out / "verdicts.parquet")
print(len(cells), "cells", len(verdicts), "verdicts")
