"""Boundary checks shared by the compute modules.

Every public function validates its arguments once, here, and raises a
``ValueError`` that names the argument and shows the offending value.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__: list[str] = []


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    """The first offending element of ``arr`` as a plain Python value."""
    value = arr[bad].flat[0]
    return value.item() if hasattr(value, "item") else value


def _as_float_array(name: str, value) -> np.ndarray:
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        arr = np.asarray(value, dtype=float)
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be a number or an array of numbers, got {value!r}") from None
    return arr


def probability(name: str, value) -> np.ndarray:
    """Return ``value`` as a float array after checking it lies in [0, 1].

    NaN and values outside [0, 1] raise ``ValueError`` naming ``name``.
    """
    arr = _as_float_array(name, value)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        shown = value if arr.ndim == 0 else _first_bad(arr, bad)
        raise ValueError(f"{name} must be in [0, 1], got {shown!r}")
    return arr


def count(name: str, value, *, minimum: int = 0) -> np.ndarray:
    """Return ``value`` as an integer array after checking it is a whole number >= minimum."""
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        if value < minimum:
            raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
        # Python ints beyond int64 would overflow silently in numpy.
        if value > np.iinfo(np.int64).max:
            raise ValueError(f"{name} is too large, got {value!r}")
        return np.asarray(value, dtype=np.int64)
    arr = _as_float_array(name, value)
    bad = ~np.isfinite(arr) | (arr != np.round(arr)) | (arr < minimum)
    if bad.any():
        shown = value if arr.ndim == 0 else _first_bad(arr, bad)
        raise ValueError(f"{name} must be an integer >= {minimum}, got {shown!r}")
    return arr.astype(np.int64)


def single(name: str, arr: np.ndarray):
    """The one value of a validated 0-d array; arrays raise ``ValueError`` naming ``name``."""
    if arr.ndim != 0:
        raise ValueError(f"{name} must be a single number, got an array of shape {arr.shape}")
    return arr.item()


def flag(name: str, value) -> bool:
    """``value`` as a bool; anything but ``True`` or ``False`` raises ``ValueError``."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise ValueError(f"{name} must be True or False, got {value!r}")


def random_generator(seed) -> np.random.Generator:
    """A random generator from ``seed``: None, an integer >= 0, or a Generator used as given."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None or (
        isinstance(seed, numbers.Integral) and not isinstance(seed, (bool, np.bool_)) and seed >= 0
    ):
        return np.random.default_rng(seed)
    raise ValueError(
        f"seed must be None, an integer >= 0 or a numpy.random.Generator, got {seed!r}"
    )


def broadcast(**arrays: np.ndarray) -> list[np.ndarray]:
    """Broadcast named arrays together, naming them all when shapes clash."""
    try:
        return list(np.broadcast_arrays(*arrays.values()))
    except ValueError:
        shapes = ", ".join(f"{k} {np.shape(v)}" for k, v in arrays.items())
        raise ValueError(f"arguments cannot be broadcast together: {shapes}") from None


def scalar_or_array(result):
    """A Python float (or bool) for 0-d results, the array otherwise."""
    result = np.asarray(result)
    if result.ndim == 0:
        return result.item()
    return result
