"""The noise diagnostics' ε axis (log, narrow panels): the full config's grid 0.01…0.25 wrote
0.1, 0.15, 0.2 and 0.25 over each other (the figure check of the full build flagged it)."""

import numpy as np
import pytest

from mpdp.studies.wddp.figures import spaced_log_ticks


@pytest.mark.parametrize("grid", [[0.01, 0.05, 0.1, 0.15, 0.2, 0.25], [0.1, 1, 10], [0.5], [0.01, 0.02, 0.03, 0.25]])
def test_labelled_eps_are_a_decade_quarter_apart_and_include_the_largest(grid):
    kept = spaced_log_ticks(np.array(grid))
    assert set(kept) <= set(grid)
    assert np.all(np.diff(np.log10(kept)) >= 0.25)
    assert kept[-1] == max(grid)


def test_the_full_grid_keeps_its_ends_and_the_decade():
    assert spaced_log_ticks(np.array([0.01, 0.05, 0.1, 0.15, 0.2, 0.25])) == [0.01, 0.05, 0.1, 0.25]
