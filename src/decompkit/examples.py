r"""The lecture's worked plan examples as data, so notebooks, figures and tests read one source.

Each example is a DAG ``{node: [predecessors]}`` with durations :math:`d_v`; the figures
quoted in the lecture follow by computation: serial time :math:`W = \sum_v d_v`, critical
path :math:`T_\infty`, speed-up :math:`W / T`, and the useful concurrency of a frontier
(a set of tasks that may run at once) :math:`\sum_{v \in F} d_v / \max_{v \in F} d_v`.

Every call returns fresh dicts: mutating one example never changes another.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from fractions import Fraction

import numpy as np

from .validate import broadcast, finite_result, nonnegative

__all__ = [
    "WorkedExample",
    "coding_task",
    "migration",
    "COORDINATE",
    "speedup",
    "relative_change",
    "useful_concurrency",
]

#: Name of the node that models the coordination tax of a fan-out.
COORDINATE = "coordinate"


@dataclass(frozen=True)
class WorkedExample:
    """One worked example: graph, durations, labels and the variations the lecture discusses.

    Attributes
    ----------
    name : str
        Short title.
    unit : str
        Unit of the durations ("units", "slots").
    graph : dict
        ``{node: [predecessors]}``; every node is a key.
    durations : dict
        ``{node: duration}``.
    labels : dict
        ``{node: long name}`` for figures.
    spurious_edge : tuple or None
        An edge ``(u, v)`` that is not a real dependency (example A).
    resources : dict
        ``{node: [resource keys]}``; nodes sharing a key may not run at once (example B).
    fan_out : tuple
        The frontier of parallel branches the coordination tax applies to.
    coordination : int
        Coordination tax in duration units, paid once before the fan-out (0: none).
    """

    name: str
    unit: str
    graph: dict
    durations: dict
    labels: dict
    spurious_edge: tuple | None = None
    resources: dict = field(default_factory=dict)
    fan_out: tuple = ()
    coordination: int = 0

    def with_edge(self, u, v) -> dict:
        """A fresh copy of ``graph`` with the extra edge ``u -> v`` (``v`` waits for ``u``).

        Examples
        --------
        >>> a = coding_task()
        >>> a.with_edge(*a.spurious_edge)["write_tests"]
        ['read_spec', 'fetch_data']
        """
        for node in (u, v):
            if node not in self.graph:
                raise ValueError(f"unknown node {node!r} in example {self.name!r}")
        graph = {node: list(preds) for node, preds in self.graph.items()}
        if u not in graph[v]:
            graph[v].append(u)
        return graph

    def with_duration(self, node, value) -> dict:
        """A fresh copy of ``durations`` with ``node`` set to ``value``.

        Examples
        --------
        >>> migration().with_duration("E", 6)["E"]
        6
        """
        if node not in self.durations:
            raise ValueError(f"unknown node {node!r} in example {self.name!r}")
        durations = dict(self.durations)
        durations[node] = value
        return durations

    def with_coordination(self) -> tuple[dict, dict]:
        """Graph and durations with the coordination tax as a node before the fan-out.

        The node :data:`COORDINATE` takes ``coordination`` units, waits for everything the
        fan-out waited for, and the fan-out now waits for it alone. The tax therefore adds
        to the total work *and* sits on every path through the fan-out.

        Returns
        -------
        graph, durations : dict, dict

        Raises
        ------
        ValueError
            If the example has no fan-out to coordinate.

        Examples
        --------
        >>> g, d = migration().with_coordination()
        >>> g["coordinate"], g["E"], d["coordinate"]
        (['F', 'S', 'R'], ['coordinate'], 4)
        """
        if not self.fan_out or not self.coordination:
            raise ValueError(f"example {self.name!r} has no coordinated fan-out")
        before = list(dict.fromkeys(u for v in self.fan_out for u in self.graph[v]))
        graph = {}
        for node, preds in self.graph.items():
            if node == self.fan_out[0]:
                graph[COORDINATE] = before
            graph[node] = [COORDINATE] if node in self.fan_out else list(preds)
        durations = {COORDINATE: self.coordination, **self.durations}
        return graph, durations


def coding_task() -> WorkedExample:
    """Worked example A: a small coding task (durations in units).

    Returns
    -------
    WorkedExample
        read_spec 1; fetch_data 3 and write_tests 2 after read_spec; write_code 4 after
        fetch_data; run_tests 1 after write_code and write_tests; report 1 after run_tests.
        The spurious edge fetch_data -> write_tests is not a real dependency.

    Notes
    -----
    Critical path read_spec -> fetch_data -> write_code -> run_tests -> report = 10 units,
    serial time 12, slack of write_tests 5; the spurious edge keeps the makespan at 10 but
    cuts that slack to 2 (see the tests, which compute these from this data).

    Examples
    --------
    >>> a = coding_task()
    >>> sum(a.durations.values())
    12
    """
    return WorkedExample(
        name="coding task",
        unit="units",
        graph={
            "read_spec": [],
            "fetch_data": ["read_spec"],
            "write_tests": ["read_spec"],
            "write_code": ["fetch_data"],
            "run_tests": ["write_code", "write_tests"],
            "report": ["run_tests"],
        },
        durations={
            "read_spec": 1,
            "fetch_data": 3,
            "write_tests": 2,
            "write_code": 4,
            "run_tests": 1,
            "report": 1,
        },
        labels={
            "read_spec": "read the spec",
            "fetch_data": "fetch the data",
            "write_tests": "write the tests",
            "write_code": "write the code",
            "run_tests": "run the tests",
            "report": "report",
        },
        spurious_edge=("fetch_data", "write_tests"),
    )


def migration() -> WorkedExample:
    """Worked example B: migrating a warehouse connector (durations in slots).

    Returns
    -------
    WorkedExample
        F find callers 2; S read schemas 2 (after F); R read runbook 1; P patch reporting 6,
        E patch ETL 8 and D patch dashboard API 5 (each after F, S, R); A approval 1 (after
        P, E, D); Y deploy 2 (after A); V verify production 3 (after Y). The fan-out
        (P, E, D) costs 4 coordination slots, and the three patches share one mutating
        resource, the ``"tenant"`` lock.

    Notes
    -----
    Serial 30 slots; critical path F, S, E, A, Y, V = 18; with coordination 34 work and 22
    wall (speed-up 30/22 = 1.36); the patch frontier has useful concurrency 19/8 = 2.375;
    the tenant lock serialises the patches: 29 slots, 33 with coordination.

    Examples
    --------
    >>> b = migration()
    >>> b.labels["E"], b.durations["E"], b.graph["E"]
    ('patch ETL', 8, ['F', 'S', 'R'])
    """
    after_reading = ["F", "S", "R"]
    return WorkedExample(
        name="warehouse-connector migration",
        unit="slots",
        graph={
            "F": [],
            "S": ["F"],
            "R": [],
            "P": list(after_reading),
            "E": list(after_reading),
            "D": list(after_reading),
            "A": ["P", "E", "D"],
            "Y": ["A"],
            "V": ["Y"],
        },
        durations={"F": 2, "S": 2, "R": 1, "P": 6, "E": 8, "D": 5, "A": 1, "Y": 2, "V": 3},
        labels={
            "F": "find callers",
            "S": "read schemas",
            "R": "read runbook",
            "P": "patch reporting",
            "E": "patch ETL",
            "D": "patch dashboard API",
            "A": "approval",
            "Y": "deploy",
            "V": "verify production",
        },
        resources={"P": ["tenant"], "E": ["tenant"], "D": ["tenant"]},
        fan_out=("P", "E", "D"),
        coordination=4,
    )


def speedup(serial, wall):
    """How many times faster the plan finishes than doing everything in sequence.

    Parameters
    ----------
    serial : float or array_like
        Serial time (total work of the original list), >= 0.
    wall : float or array_like
        Wall-clock time of the parallel plan, > 0.

    Returns
    -------
    float or ndarray
        ``serial / wall``.

    Raises
    ------
    ValueError
        If ``serial`` is negative or ``wall`` is not positive, either is infinite, NaN or not
        a number, the shapes do not broadcast, or the quotient is beyond the float range.

    Notes
    -----
    Example B: 30 slots of work finish in 22 slots of wall time, a speed-up of 1.36.
    Infinite times are refused rather than divided: ``inf / inf`` has no value, and an
    infinite serial time is not a duration.

    Examples
    --------
    >>> round(speedup(30, 22), 2)
    1.36
    >>> speedup(float("inf"), float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: serial must be a finite number >= 0, got inf
    """
    serial = nonnegative("serial", serial)
    wall = nonnegative("wall", wall, strict=True)
    serial, wall = broadcast(serial=serial, wall=wall)
    with np.errstate(over="ignore"):  # checked: an overflow is a ValueError
        value = serial / wall
    return finite_result("speedup", value, serial=serial, wall=wall)


def relative_change(new, old):
    """Relative change ``new / old - 1`` (e.g. +0.133 for 34 against 30).

    Parameters
    ----------
    new : float or array_like
        The new value, >= 0.
    old : float or array_like
        The reference value, > 0.

    Returns
    -------
    float or ndarray

    Raises
    ------
    ValueError
        If ``new`` is negative or ``old`` is not positive, either is infinite, NaN or not a
        number, the shapes do not broadcast, or the quotient is beyond the float range.

    Notes
    -----
    Example B: coordination raises the work from 30 to 34 slots (+13.3 %) while the wall
    time falls from 30 to 22 (-26.7 %).

    Examples
    --------
    >>> round(relative_change(34, 30), 3), round(relative_change(22, 30), 3)
    (0.133, -0.267)
    """
    new = nonnegative("new", new)
    old = nonnegative("old", old, strict=True)
    new, old = broadcast(new=new, old=old)
    with np.errstate(over="ignore"):  # checked: an overflow is a ValueError
        value = new / old - 1.0
    return finite_result("relative_change", value, new=new, old=old)


def useful_concurrency(durations: Mapping, frontier: Iterable) -> float:
    """Work of a frontier divided by its longest branch: how many workers it can keep busy.

    Parameters
    ----------
    durations : Mapping
        ``{node: duration}``.
    frontier : iterable of nodes
        Tasks that may run at the same time (e.g. one generation of the DAG).

    Returns
    -------
    float
        :math:`\\sum_{v \\in F} d_v / \\max_{v \\in F} d_v`; beyond this many workers the
        frontier finishes no sooner.

    Raises
    ------
    ValueError
        If ``durations`` is not a mapping, the frontier is not an iterable of hashable nodes,
        is empty or a str, names a node without a duration, a duration is negative,
        infinite or not a number, or every duration is 0.

    Notes
    -----
    Example B's patch frontier (P, E, D) holds 19 slots of work behind a longest branch of
    8: a useful concurrency of 2.375. The sum is taken exactly, so durations near the float
    limit (or integers beyond it) still give a value between 1 and the frontier's size.

    Examples
    --------
    >>> useful_concurrency({"P": 6, "E": 8, "D": 5}, ["P", "E", "D"])
    2.375
    """
    if not isinstance(durations, Mapping):
        raise ValueError(f"durations must be a mapping {{node: duration}}, got {durations!r}")
    if isinstance(frontier, (str, bytes)):
        raise ValueError(f"frontier must be an iterable of nodes, not the str {frontier!r}")
    if not isinstance(frontier, Iterable):
        raise ValueError(f"frontier must be an iterable of nodes, got {frontier!r}")
    nodes = list(frontier)
    if not nodes:
        raise ValueError("frontier must name at least one node, got an empty frontier")
    values = []
    for node in nodes:
        try:
            known = node in durations
        except TypeError:  # unhashable
            raise ValueError(f"frontier must hold hashable nodes, got {node!r}") from None
        if not known:
            raise ValueError(f"durations has no entry for frontier node {node!r}")
        x = durations[node]
        real = isinstance(x, numbers.Real) and not isinstance(x, (bool, np.bool_))
        if not (real and x >= 0 and (isinstance(x, numbers.Integral) or math.isfinite(x))):
            raise ValueError(f"duration of node {node!r} must be a finite number >= 0, got {x!r}")
        values.append(Fraction(int(x)) if isinstance(x, numbers.Integral) else Fraction(float(x)))
    longest = max(values)
    if longest == 0:
        raise ValueError(f"every duration in the frontier is 0, got {nodes!r}")
    return float(sum(values) / longest)
