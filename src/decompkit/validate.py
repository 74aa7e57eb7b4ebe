"""Boundary checks shared by the compute modules, and the one shortened ``repr`` of a message.

Every public function validates its arguments once, here, and raises a ``ValueError`` that
names the argument and shows the offending value. A count is a whole number; :func:`count`
returns it as an exact int64 and refuses what int64 cannot hold, :func:`large_count` returns
it as a float for formulas such as :math:`p^n` that stay right for any size of :math:`n`.
:func:`whole` and :func:`finite` check one scalar and return it as a plain Python number;
:func:`finite_result` is the one overflow check of a formula computed in plain floats.
:data:`short` cuts a long value to 60 characters wherever an error message shows it.

Every room of the package imports this module (it sits at the bottom of the import table in
``docs/architecture.md``), so every name here without an underscore is public.
"""

from __future__ import annotations

import math
import numbers
import reprlib

import numpy as np

__all__ = [
    "INT64_MAX",
    "short",
    "probability",
    "nonnegative",
    "count",
    "large_count",
    "whole",
    "finite",
    "single",
    "flag",
    "random_generator",
    "broadcast",
    "scalar_or_array",
    "finite_result",
]

#: The largest int64, the default upper bound of :func:`count`.
INT64_MAX = 2**63 - 1

#: A ``repr`` that cuts long values, for error messages.
short = reprlib.Repr()
short.maxstring = short.maxother = short.maxlong = 60


def _first_bad(arr: np.ndarray, bad: np.ndarray):
    """The first offending element of ``arr`` as a plain Python value."""
    value = arr[bad].flat[0]
    return value.item() if hasattr(value, "item") else value


def _shown(value, arr: np.ndarray, bad: np.ndarray) -> str:
    """The offending value for a message: the argument itself if scalar, else its first bad."""
    return short.repr(value if arr.ndim == 0 else _first_bad(arr, bad))


def _is_int(x) -> bool:
    return isinstance(x, numbers.Integral) and not isinstance(x, (bool, np.bool_))


def _numbers(name: str, value) -> np.ndarray:
    """``value`` as an array of real numbers without rounding any of them.

    The dtype is an integer or float one, or object for Python integers too large for int64.
    """
    if isinstance(value, (bool, np.bool_)):
        raise ValueError(f"{name} must be a number, got {value!r}")
    try:
        arr = np.asarray(value)
    except (TypeError, ValueError, OverflowError):
        arr = np.asarray(None)  # ragged nesting: reported below like any non-number
    kind = arr.dtype.kind
    if kind in "iuf":
        return arr
    if kind == "O" and arr.size and all(_is_int(x) for x in arr.flat):
        return arr
    if kind == "O" and arr.ndim and all(isinstance(x, numbers.Real) for x in arr.flat):
        try:  # other real numbers (Fraction, Decimal) in a list
            return np.asarray(arr, dtype=float)
        except OverflowError:
            raise ValueError(
                f"{name} holds a number beyond the float range (about 1.8e308), "
                f"got {short.repr(value)}"
            ) from None
    if kind == "O" and arr.ndim == 0 and isinstance(value, numbers.Real):
        return np.asarray(float(value))
    raise ValueError(f"{name} must be a number or an array of numbers, got {short.repr(value)}")


def _as_float_array(name: str, value) -> np.ndarray:
    arr = _numbers(name, value)
    if arr.dtype.kind == "O":  # Python integers beyond int64
        try:
            return arr.astype(float)
        except OverflowError:
            raise ValueError(
                f"{name} holds a number beyond the float range (about 1.8e308), "
                f"got {short.repr(value)}"
            ) from None
    return arr.astype(float, copy=False)


def probability(name: str, value) -> np.ndarray:
    """Return ``value`` as a float array after checking it lies in [0, 1].

    NaN and values outside [0, 1] raise ``ValueError`` naming ``name``.

    Examples
    --------
    >>> probability("p", 0.25)
    array(0.25)
    >>> probability("p", [0.5, 1.2])
    Traceback (most recent call last):
    ...
    ValueError: p must be in [0, 1], got 1.2
    """
    if type(value) is float and 0.0 <= value <= 1.0:  # the usual case, checked cheaply
        return np.asarray(value)
    arr = _as_float_array(name, value)
    bad = ~((arr >= 0.0) & (arr <= 1.0))  # also catches NaN
    if bad.any():
        raise ValueError(f"{name} must be in [0, 1], got {_shown(value, arr, bad)}")
    return arr


def nonnegative(name: str, value, *, strict: bool = False) -> np.ndarray:
    """Return ``value`` as a float array of finite numbers >= 0 (> 0 with ``strict``).

    Examples
    --------
    >>> nonnegative("a", [0, 2.5])
    array([0. , 2.5])
    >>> nonnegative("wall", float("inf"), strict=True)
    Traceback (most recent call last):
    ...
    ValueError: wall must be a finite number > 0, got inf
    """
    arr = _as_float_array(name, value)
    bad = ~(np.isfinite(arr) & ((arr > 0.0) if strict else (arr >= 0.0)))
    if bad.any():
        bound = "> 0" if strict else ">= 0"
        raise ValueError(f"{name} must be a finite number {bound}, got {_shown(value, arr, bad)}")
    return arr


def _whole_floats(arr: np.ndarray) -> np.ndarray:
    """Where a float array holds a finite whole number."""
    with np.errstate(invalid="ignore"):
        return np.isfinite(arr) & (arr == np.floor(arr))


def count(name: str, value, *, minimum: int = 0, maximum: int = INT64_MAX, why: str = ""):
    """Return a whole number (or an array of them) as exact int64 after checking its range.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : int, float or array_like
        Python or NumPy integers, or floats with a whole value (``12.0``).
    minimum, maximum : int
        The accepted range, both ends included; ``maximum`` is at most ``2**63 - 1``.
    why : str
        Appended to the message when ``value`` exceeds ``maximum`` (say why the bound).

    Returns
    -------
    ndarray of int64
        The same shape as ``value``; every element exactly the number given.

    Raises
    ------
    ValueError
        Naming ``name`` and showing the first offending value: a bool, a non-number, NaN,
        an infinity, a fraction, a number below ``minimum`` or above ``maximum``. A float
        is compared by its exact value, so ``1e19`` and ``2.0**63`` are above ``2**63 - 1``
        and refused, never wrapped around to a negative int64.

    Examples
    --------
    >>> count("n", 12.0), count("n", [2, 3])
    (array(12), array([2, 3]))
    >>> count("n", 2**63 - 1)
    array(9223372036854775807)
    >>> count("n", 1e19)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer <= 2**63 - 1, got 1e+19
    >>> count("n", 2**63)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer <= 2**63 - 1, got 9223372036854775808
    >>> count("n", 2.0**63)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer <= 2**63 - 1, got 9.223372036854776e+18
    >>> count("trials", 10**12, minimum=1, maximum=10**7, why=" per call")
    Traceback (most recent call last):
    ...
    ValueError: trials must be an integer <= 10000000 per call, got 1000000000000
    >>> count("n", -1)
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer >= 0, got -1
    """
    if type(value) is int and minimum <= value <= maximum:  # the usual case, checked cheaply
        return np.asarray(value, dtype=np.int64)
    arr = _numbers(name, value)
    if arr.dtype.kind == "f":
        whole = _whole_floats(arr)
        low = ~whole | (arr < minimum)
        limit = float(maximum)  # the double nearest maximum; it may lie above it
        high = whole & ((arr > limit) | ((arr == limit) & (int(limit) > maximum)))
    else:
        low = np.asarray(arr < minimum, dtype=bool)
        high = np.asarray(arr > maximum, dtype=bool)
    if low.any():
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_shown(value, arr, low)}")
    if high.any():
        bound = "2**63 - 1" if maximum == INT64_MAX else str(maximum)
        raise ValueError(
            f"{name} must be an integer <= {bound}{why}, got {_shown(value, arr, high)}"
        )
    return arr.astype(np.int64)


def large_count(name: str, value, *, minimum: int = 0) -> np.ndarray:
    """Return a whole number of any size (or an array of them) as float64.

    For counts that enter a formula only through a smooth function, such as the exponent of
    :math:`p^n` or a round budget, where a count beyond int64 still has a right answer.

    Parameters
    ----------
    name : str
        The argument's name, for the message.
    value : int, float or array_like
        Whole numbers >= ``minimum``, as large as a float can hold (about 1.8e308).
    minimum : int
        The smallest accepted value.

    Returns
    -------
    ndarray of float64
        The counts as doubles: exact up to ``2**53``, the nearest double above.

    Raises
    ------
    ValueError
        Naming ``name`` and showing the first offending value: a bool, a non-number, NaN,
        an infinity, a fraction, a number below ``minimum``, or an integer beyond the float
        range.

    Examples
    --------
    >>> large_count("n", 1e19), large_count("n", 2**63)
    (array(1.e+19), array(9.22337204e+18))
    >>> large_count("n", 10**400)
    Traceback (most recent call last):
    ...
    ValueError: n holds a number beyond the float range (about 1.8e308), got 1000...0000
    >>> large_count("n", float("inf"))
    Traceback (most recent call last):
    ...
    ValueError: n must be an integer >= 0, got inf
    """
    if type(value) is int and minimum <= value < 2**1023:  # the usual case, checked cheaply
        return np.asarray(float(value))
    arr = _as_float_array(name, value)
    low = ~_whole_floats(arr) | (arr < minimum)
    if low.any():
        raise ValueError(f"{name} must be an integer >= {minimum}, got {_shown(value, arr, low)}")
    return arr


def whole(name: str, value, *, minimum: int) -> int:
    """A scalar whole number >= ``minimum`` as a Python int, through :func:`count`.

    A str, a list or an array is refused here (:func:`count` would broadcast it).

    Examples
    --------
    >>> whole("seq", 3.0, minimum=0), whole("workers", np.int64(2), minimum=1)
    (3, 2)
    >>> whole("seq", "3", minimum=0)
    Traceback (most recent call last):
    ...
    ValueError: seq must be an integer >= 0, got '3'
    """
    if type(value) is int and minimum <= value <= INT64_MAX:  # the usual case, checked cheaply
        return value
    try:
        scalar = not isinstance(value, (str, bytes)) and np.ndim(value) == 0
    except ValueError:  # a ragged nested list
        scalar = False
    if not scalar:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {short.repr(value)}")
    return int(count(name, value, minimum=minimum))


def finite(name: str, value):
    """``value`` as a plain int (any integer, exactly) or a finite float; NumPy scalars too.

    A bool, a non-number, NaN, an infinity (or a number too large for a float) raises
    ``ValueError`` naming ``name``.

    Examples
    --------
    >>> finite("time", np.float64(2.5)), finite("time", 10**400) == 10**400
    (2.5, True)
    >>> finite("time", float("nan"))
    Traceback (most recent call last):
    ...
    ValueError: time must be a finite number, got nan
    """
    if type(value) is int or (type(value) is float and math.isfinite(value)):
        return value  # the usual case, checked cheaply
    if _is_int(value):
        return int(value)
    if isinstance(value, numbers.Real) and not isinstance(value, (bool, np.bool_)):
        try:
            number = float(value)
        except OverflowError:  # e.g. a huge Fraction
            number = math.inf
        if math.isfinite(number):
            return number
    raise ValueError(f"{name} must be a finite number, got {short.repr(value)}")


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
    if seed is None or (_is_int(seed) and seed >= 0):
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


def _plain(x) -> str:
    """A number for a message: a whole float below 1e16 without its ``.0``."""
    x = float(x)
    return str(int(x)) if x.is_integer() and abs(x) < 1e16 else repr(x)


def finite_result(func: str, value, **arrays):
    """``value`` as :func:`scalar_or_array` returns it, once no element left the float range.

    The one check a formula computed in plain floats needs: where it overflowed to inf (or
    to NaN through an inf), a ``ValueError`` names ``func`` and the arguments ``arrays``
    (broadcast to the shape of ``value``) at the first such point.

    Examples
    --------
    >>> x = np.asarray([1e300, 1e10])
    >>> finite_result("square", x[1] * x[1], x=x[1])
    1e+20
    >>> with np.errstate(over="ignore"):
    ...     finite_result("square", x * x, x=x)
    Traceback (most recent call last):
    ...
    ValueError: square is beyond the float range (about 1.8e308) at x=1e+300
    """
    bad = ~np.isfinite(value)
    if bad.any():
        at = ", ".join(f"{k}={_plain(v[bad].flat[0])}" for k, v in arrays.items())
        raise ValueError(f"{func} is beyond the float range (about 1.8e308) at {at}")
    return scalar_or_array(value)
