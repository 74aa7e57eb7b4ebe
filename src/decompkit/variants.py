"""The numbers each exercise notebook works with, gathered in one parameter object per notebook.

Every exercise reads its numbers (p, d, phi, q, n, durations, ...) from the notebook's
parameter object, never from literals typed into a cell, so the same notebook can be handed
out with other numbers. ``params(notebook)`` gives the lecture's own numbers.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["ChainParams", "params", "NOTEBOOKS"]


@dataclass(frozen=True)
class ChainParams:
    """Numbers of the chain-reliability notebook (lecture sections 1-2).

    Attributes
    ----------
    p, n : per-step success rate and chain length of the worked chain.
    p_monolithic : per-step rate behind the monolithic prompt whose task success is given.
    p_half : per-step rate for the half-life exercise.
    d, phi : detection and false-positive rates of the boundary check.
    k : attempts allowed behind a perfect check.
    d_other, phi_other : a second check, to decide whether it is worth adding.
    d_graph : detection rate in the per-step vs per-graph comparison.
    """

    p: float = 0.9
    n: int = 10
    p_monolithic: float = 0.8
    p_half: float = 0.95
    d: float = 0.8
    phi: float = 0.1
    k: int = 3
    d_other: float = 0.3
    phi_other: float = 0.4
    d_graph: float = 1.0

    @property
    def task_success(self) -> float:
        """Success of the monolithic prompt over n steps, rounded as a measurement would be."""
        return round(self.p_monolithic**self.n, 4)


NOTEBOOKS = {"chain": ChainParams}


def params(notebook: str):
    """The parameter object of ``notebook`` with the lecture's own numbers.

    Examples
    --------
    >>> P = params("chain")
    >>> P.p, P.n, P.task_success
    (0.9, 10, 0.1074)
    """
    try:
        return NOTEBOOKS[notebook]()
    except KeyError:
        raise ValueError(f"notebook must be one of {sorted(NOTEBOOKS)}, got {notebook!r}") from None
