r"""The lecture's reference table: success against horizon for a few audit levels.

Row :math:`q` lists :math:`P_\mathrm{success}(n, p, q, \mathrm{round}(\gamma n))` for a few
horizons :math:`n`, the collapse horizon and the grounded half-life
:math:`t_{1/2} = \ln 2 / (-\ln(1-\lambda))`; at :math:`p = 0.95`, :math:`\gamma = 2` these
are the figures the lecture prints.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from ..validate import count, probability, single
from .exact import success_exact
from .horizon import (
    check_budget_factor,
    check_grid,
    collapse_horizon,
    grounded_half_life,
    rounded_budgets,
)

__all__ = ["ReferenceRow", "ReferenceTable", "reference_table"]


@dataclass(frozen=True)
class ReferenceRow:
    """One audit level of the reference table.

    ``success`` maps each horizon ``n`` to the success within ``round(budget_factor * n)``.
    """

    q: float
    success: dict[int, float]
    collapse_n: int | None
    half_life: float


@dataclass(frozen=True)
class ReferenceTable:
    """Success against horizon for a few audit levels, with collapse horizon and half-life."""

    p: float
    budget_factor: float
    ns: tuple[int, ...]
    grid_max: int
    rows: tuple[ReferenceRow, ...]

    def to_records(self) -> list[dict]:
        """The rows as plain dicts with the column names of :meth:`to_text`."""
        records = []
        for row in self.rows:
            record = {"q": row.q}
            record.update({f"n={n}": row.success[n] for n in self.ns})
            record["collapse n"] = row.collapse_n
            record["half-life"] = row.half_life
            records.append(record)
        return records

    def to_text(self) -> str:
        """A Markdown table: success to 3 decimals, half-life to 1, ``>max`` for no collapse."""
        header = ["q", *(f"n={n}" for n in self.ns), "collapse n", "half-life"]
        body = []
        for row in self.rows:
            collapse = f">{self.grid_max}" if row.collapse_n is None else str(row.collapse_n)
            half = "inf" if math.isinf(row.half_life) else f"{row.half_life:.1f}"
            cells = [f"{row.q:.2f}", *(f"{row.success[n]:.3f}" for n in self.ns)]
            body.append([*cells, collapse, half])
        widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]

        def line(cells):
            return "| " + " | ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)) + " |"

        rule = "|" + "|".join("-" * (w + 2) for w in widths) + "|"
        return "\n".join([line(header), rule, *(line(r) for r in body)])

    _repr_markdown_ = to_text


def reference_table(
    p=0.95,
    budget_factor=2.0,
    qs=(0.0, 0.5, 0.9, 1.0),
    ns=(10, 25, 50, 100, 200),
    *,
    grid=range(5, 205, 5),
):
    r"""The lecture's reference table: success against horizon for several audit levels.

    Parameters
    ----------
    p : float
        Executor accuracy per round.
    budget_factor : float
        Budget per subtask; horizon ``n`` gets ``round(budget_factor * n)`` rounds.
    qs : sequence of float
        Audit detection probabilities, one row each.
    ns : sequence of int
        Horizons shown as columns.
    grid : iterable of int
        Horizons searched for the collapse horizon (see :func:`collapse_horizon`).

    Returns
    -------
    ReferenceTable
        ``rows`` (one :class:`ReferenceRow` per ``q``), ``to_records()`` for a data frame
        and ``to_text()`` for the Markdown rendering (also how Jupyter shows the table).

    Raises
    ------
    ValueError
        On a bad ``p``, ``q``, horizon, ``budget_factor`` or ``grid`` (as
        :func:`collapse_horizon` checks it, even when ``qs`` is empty).

    Examples
    --------
    >>> print(reference_table().to_text())
    | q    | n=10  | n=25  | n=50  | n=100 | n=200 | collapse n | half-life |
    |------|-------|-------|-------|-------|-------|------------|-----------|
    | 0.00 | 0.599 | 0.277 | 0.077 | 0.006 | 0.000 | 15         | 13.5      |
    | 0.50 | 0.771 | 0.522 | 0.273 | 0.074 | 0.006 | 30         | 27.4      |
    | 0.90 | 0.949 | 0.877 | 0.769 | 0.592 | 0.350 | 135        | 138.3     |
    | 1.00 | 1.000 | 1.000 | 1.000 | 1.000 | 1.000 | >200       | inf       |
    """
    p = single("p", probability("p", p))
    budget_factor = check_budget_factor(budget_factor)
    qs_arr = probability("q", qs).ravel()
    ns_arr = count("n", ns).ravel()
    grid = check_grid(grid)
    success = success_exact(
        ns_arr[None, :], p, qs_arr[:, None], rounded_budgets(ns_arr, budget_factor)
    )
    success = np.asarray(success).reshape(qs_arr.size, ns_arr.size)
    rows = tuple(
        ReferenceRow(
            q=float(q),
            success={int(n): float(s) for n, s in zip(ns_arr, success[i], strict=True)},
            collapse_n=collapse_horizon(p, q, budget_factor, grid=grid),
            half_life=grounded_half_life(p, q),
        )
        for i, q in enumerate(qs_arr)
    )
    grid_max = int(grid[-1])
    return ReferenceTable(p, budget_factor, tuple(int(n) for n in ns_arr), grid_max, rows)
