"""The agents explorer: its curves are the package's pass^k, its input is checked."""

from __future__ import annotations

import numpy as np
import pytest
from numpy.testing import assert_allclose

from decompkit.traces import mixture_pass_k
from decompkit.widgets import AgentsExplorer, agents_explorer


def test_the_curves_follow_the_sliders():
    ex = agents_explorer(p=0.42, spread=0.3, k=3, recorded=[0.42, 0.27, 0.22, 0.2])
    ks = np.arange(1, 11)
    assert_allclose(ex.values["shared"], 0.42**ks)
    assert_allclose(ex.values["mixed"], mixture_pass_k(0.42, 0.3, ks))
    ex.controls["spread"].value = 0.0
    assert_allclose(ex.values["mixed"], ex.values["shared"])
    ex.controls["p"].value = 0.9
    assert_allclose(ex.values["shared"][1], 0.81)
    ex.controls["k"].value = 5
    assert "k = 5" in ex.readout.value
    assert isinstance(ex, AgentsExplorer) and ex.png()[:4] == b"\x89PNG"


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"p": 1.5}, r"p must be in \[0, 1\], got 1.5"),
        ({"k": 11}, r"k must be in \[1, 10\], got 11"),
        ({"recorded": [0.5, 1.2]}, r"recorded must hold pass\^1, .*got \[0.5, 1.2\]"),
        ({"k_max": 1}, "k_max must be an integer >= 2, got 1"),
    ],
)
def test_bad_start_values_are_refused(kwargs, match):
    with pytest.raises(ValueError, match=match):
        agents_explorer(**kwargs)
