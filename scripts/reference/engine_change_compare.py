"""Change table (issue 55 item 7): per claim-reading, the pre-55 engine's verdict and cell counts against
the current engine's, on the same results tables; the reason from the cells that moved."""
import sys

import pandas as pd

old_dir, new_dir, out = sys.argv[1], sys.argv[2], sys.argv[3]
ov = pd.read_parquet(f"{old_dir}/verdicts.parquet"); nv = pd.read_parquet(f"{new_dir}/verdicts.parquet")
oc = pd.read_parquet(f"{old_dir}/cells.parquet"); nc = pd.read_parquet(f"{new_dir}/cells.parquet")
key = ["study", "claim_id", "reading"]
m = ov.merge(nv, on=key, how="outer", suffixes=("_old", "_new"), indicator=True)
cells = oc.merge(nc, on=key + ["cell", "dataset"], how="inner", suffixes=("_old", "_new"))
rows = []
for _, r in m.iterrows():
    k = tuple(r[c] for c in key)
    c = cells[(cells["study"] == k[0]) & (cells["claim_id"] == k[1]) & (cells["reading"] == k[2])]
    moved = c[c["cell_verdict_old"] != c["cell_verdict_new"]]
    trans = moved.groupby(["cell_verdict_old", "cell_verdict_new"]).size()
    def counts(s, r=r):
        vals = [r.get(f"{x}_{s}") for x in ("n_for", "n_against")]
        return "—" if any(pd.isna(v) for v in vals) else "/".join(str(int(v)) for v in vals)
    reasons = []
    if not trans.empty:
        reasons.append(", ".join(f"{n} {a}→{b}" for (a, b), n in trans.items()))
    d_new = r.get("delta_new")
    if pd.notna(d_new) and float(d_new) > 0:
        reasons.append(f"δ = {float(d_new):.3g}")
    changed = r["_merge"] != "both" or r["verdict_old"] != r["verdict_new"] or counts("old") != counts("new")
    if changed:
        rows.append({"claim": k[1], "reading": k[2], "old verdict": r.get("verdict_old") if pd.notna(r.get("verdict_old")) else "(new claim)", "new verdict": r.get("verdict_new"),
                     "for/against old": counts("old"), "for/against new": counts("new"),
                     "no effect new": "—" if pd.isna(r.get("n_no_effect_new")) else int(r.get("n_no_effect_new")),
                     "cells that moved (old→new), margin": "; ".join(reasons) or "—"})
t = pd.DataFrame(rows)
with open(out, "w") as f:
    f.write(f"{len(t)} of {len(m)} claim-readings change verdict or counts; "
            f"{int((m['verdict_old'] != m['verdict_new']).sum())} change verdict.\n\n")
    f.write(t.to_markdown(index=False) if len(t) else "(none)\n")
print(open(out).read()[:3000])
