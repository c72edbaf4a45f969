"""The cross-paper benchmark: every mechanism on one privacy footing (spec experiments.md E10)."""
