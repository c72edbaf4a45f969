"""Report-section helpers for the empirical privacy audit (spec audit.md A4, E10).

Everything the report says about the audit is computed here from the audit table: the
summary table, the exceptions (honest rows with ε̂ above the accounted ε, shown in red) and
the findings on planted bugs and on WD-DP's Algorithm 1 at its claimed ε (spec I-1).
"""

from __future__ import annotations

import pandas as pd

from mpdp.audit.figure import adapter_label

#: readable names of the planted bugs (mpdp.audit.bugs)
BUG_TEXT = {
    "noise_factor": "noise std",
    "largest_party_sigma": "the largest party's σ used for every party (literal mode)",
    "sampling_rate": "DP-SGD sampling every record while σ is calibrated for the claimed rate q",
    "unnoised_scores": "the private selection scoring its trials without noise (whole procedure audited)",
    "objective_noise_scale": "objective perturbation's noise term divided by n twice (bᵀθ/n²)",
    "unnoised_party_scores": "the party-level selection scoring its trials on the held-out validation records "
                             "without noise (one validation record flipped)",
    "validation_in_parties": "validation records inside the audited party under the party-level claim",
}


def pvp_headline(table: pd.DataFrame) -> str:
    """What the attack on PVP's hidden state shows (spec I-20), computed from its rows.

    The row with the largest ε̂ − α: if ε̂ > α, the per-release claim is proved false; else the
    sentence says what ε̂ the attack reached. Empty when no such row was audited.
    """
    rows = table[(table["mechanism"] == "pvp_history") & ~table["planted_bug"].astype(bool)]
    if rows.empty:
        return ""
    r = rows.loc[(rows["eps_lower"] - rows["eps_claimed"]).idxmax()]
    gap = r["eps_up"] / r["eps_claimed"]
    where = (f"release t = {int(r['T'])} of paper-calibrated PVP given the earlier releases "
             f"(hidden states {gap:.3g}·Δ_p apart; exact ε of this release {r['eps_up']:.3g}, "
             f"hidden-state bound {r['eps_accounted']:.3g})")
    if r["eps_lower"] > r["eps_claimed"]:
        return (f"**PVP's privacy claim is false**: on {where}, the attack shows ε ≥ "
                f"{r['eps_lower']:.3g} with 95 % confidence, above the claimed α = "
                f"{r['eps_claimed']:g} per release.")
    return (f"PVP's hidden state: on {where}, the attack reached ε̂ = {r['eps_lower']:.3g}, not above "
            f"the claimed α = {r['eps_claimed']:g}: the claim is not refuted by this run.")


def verdict(row: pd.Series) -> str:
    """What one row shows (an audit can only falsify, spec audit.md intro)."""
    above_claim = row["eps_lower"] > row["eps_claimed"]
    if row["planted_bug"]:
        return "bug caught (ε̂ > claimed ε)" if above_claim else "bug missed"
    if row["eps_lower"] > row["eps_accounted"]:
        return "EXCEPTION: ε̂ > accounted ε"
    if above_claim:
        return "claim refuted (ε̂ > claimed ε ≤ accounted ε)"
    return "consistent (nothing refuted)"


def summary(table: pd.DataFrame) -> pd.DataFrame:
    """One readable line per audited mechanism and setting."""
    if table.empty:
        return pd.DataFrame()
    out = pd.DataFrame(
        {
            "mechanism": table["mechanism"].map(adapter_label),
            "setting": table["setting"],
            "method": table["method"],
            "planted bug": table["bug"].where(table["planted_bug"].astype(bool), "").fillna(""),
            "claimed ε": table["eps_claimed"],
            "accounted ε": table["eps_accounted"],
            "ε_up (noise used)": table["eps_up"],
            "ε̂ (95 % lower bound)": table["eps_lower"],
            "GDP fit (estimate)": table["eps_gdp"],
            "δ": table["delta"],
            "trials": table["trials"],
            "verdict": table.apply(verdict, axis=1),
        }
    )
    return out


def exceptions(table: pd.DataFrame) -> list[str]:
    """Honest rows whose ε̂ exceeds the accounted ε (each one is a bug or a 5 % event)."""
    if table.empty:
        return []
    bad = table[~table["planted_bug"].astype(bool) & (table["eps_lower"] > table["eps_accounted"])]
    return [
        f"{adapter_label(r.mechanism)} [{r.setting}]: ε̂ = {r.eps_lower:.3g} > accounted ε = "
        f"{r.eps_accounted:.3g}"
        for r in bad.itertuples()
    ]


def findings(table: pd.DataFrame) -> list[str]:
    """Sentences on the planted bugs and on literal WD-DP at its claimed ε, from the table."""
    if table.empty:
        return ["The audit table is empty."]
    lines = []
    honest = table[~table["planted_bug"].astype(bool)]
    ok = int((honest["eps_lower"] <= honest["eps_accounted"]).sum())
    lines.append(
        f"{ok} of {len(honest)} correctly calibrated rows have ε̂ ≤ accounted ε."
    )
    bugs = table[table["planted_bug"].astype(bool)]
    for bug, rows in bugs.groupby(bugs["bug"].fillna("noise_factor"), sort=True):
        caught = int((rows["eps_lower"] > rows["eps_claimed"]).sum())
        what = BUG_TEXT.get(str(bug), str(bug))
        if bug == "noise_factor":
            what += " × " + ", ".join(sorted({f"{f:g}" for f in rows["noise_factor"]}))
        by_method = ", ".join(f"{int((g['eps_lower'] > g['eps_claimed']).sum())} of {len(g)} {m}"
                              for m, g in rows.groupby("method", sort=True))
        lines.append(f"Planted bug, {what}: caught (ε̂ > claimed ε) in {caught} of {len(rows)} rows "
                     f"({by_method}).")
    audited = set(table["mechanism"])
    how = []
    if table["method"].isin(["one_run", "canary_draws"]).any():
        how.append("Gradient mechanisms run through the trainer and calibrations that produce "
                   "the tables (WD-DP study and benchmark).")
    if audited & {"dvp", "pvp"}:
        how.append("ADMM DVP and PVP are audited on one iteration's release of a node, a valid "
                   "lower bound for their whole transcript (which contains that release).")
    if "pvp_history" in audited:
        how.append("PVP is also attacked on a release given a worst-case released history "
                   "(its claim that each release is α-DP given the earlier ones).")
    lines.append("Mechanisms audited: " + ", ".join(adapter_label(m) for m in sorted(audited)) + ". "
                 + " ".join(how))
    headline = pvp_headline(table)
    if headline:
        lines.append(headline)
    literal = honest[honest["mechanism"].isin(["wddp_literal", "jayaraman_literal"])]
    for r in literal.itertuples():
        refuted = r.eps_lower > r.eps_claimed
        lines.append(
            f"{adapter_label(r.mechanism)} [{r.setting}] claims ε = {r.eps_claimed:g}; spec I-1 "
            f"predicts ε = {r.eps_accounted:.3g} for its smallest party; the attack shows "
            f"ε ≥ {r.eps_lower:.3g}: the claim is "
            + ("**proved false** (with 95 % confidence)." if refuted else "not refuted by this run.")
        )
    return lines
