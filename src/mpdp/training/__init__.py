"""Training jobs of the WD-DP replication: plan, batch, evaluate, cross-validate (spec E3)."""
