"""The reliability figures draw the package's numbers and leave pyplot alone."""

import matplotlib.pyplot as plt
import numpy as np
import pytest
from matplotlib.figure import Figure
from numpy.testing import assert_allclose

from decompkit import reliability as rel
from decompkit.plots import plot_chain_decay, plot_check_value, plot_d_phi_plane


@pytest.mark.parametrize("make", [plot_chain_decay, plot_check_value, plot_d_phi_plane])
def test_returns_a_figure_without_touching_pyplot(make):
    before = plt.get_fignums()
    fig = make()
    assert isinstance(fig, Figure)
    assert plt.get_fignums() == before
    ax = fig.axes[0]
    assert ax.get_xlabel() and ax.get_ylabel() and ax.get_title()


def test_decay_curves_are_p_to_the_n():
    fig = plot_chain_decay((0.9, 0.95), n_max=50)
    line = fig.axes[0].lines[0]
    n, y = line.get_data()
    assert_allclose(y, 0.9 ** np.asarray(n))
    assert fig.axes[0].lines[1].get_ydata()[50] == pytest.approx(0.0769, abs=5e-5)


def test_check_value_curves():
    fig = plot_check_value(0.9, phi=0.1)
    one_retry, limit, flat = fig.axes[0].lines
    d = one_retry.get_xdata()
    assert_allclose(one_retry.get_ydata(), rel.checked_step_fallible(0.9, d, 0.1))
    assert_allclose(limit.get_ydata(), rel.checked_step_limit(0.9, d))
    assert_allclose(flat.get_ydata(), 0.9)


def test_d_phi_plane_sign_follows_the_diagonal():
    fig = plot_d_phi_plane(0.9, resolution=11)
    gain = fig.axes[0].collections[0].get_array().reshape(11, 11)  # rows: phi, columns: d
    assert gain[0, 10] > 0  # phi = 0, d = 1: helps
    assert gain[10, 0] < 0  # phi = 1, d = 0: hurts
    assert_allclose(np.diag(gain), 0.0, atol=1e-15)


def test_draws_on_given_axes():
    fig = Figure()
    ax = fig.add_subplot()
    assert plot_chain_decay(ax=ax) is fig
