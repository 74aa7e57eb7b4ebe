"""The environment and the view of the machine a grading kernel gets.

:func:`kernel_environment` is the grader's environment with the student's id and without the
grader's hub session (nbgrader's own ``autograde`` path uses it as it is). A walled kernel
gets much less (:func:`walled_environment`): a few of the grader's variables, none that may
hold a secret, and its home, configuration and caches in its own scratch space. It sees this
Python and its packages read-only (:func:`python_folders`), inside the walls that
:func:`walls_for` checks can be built before anything of a run is done.
"""

from __future__ import annotations

import os
import sys

from ...exercises.params import GRADER_VARIABLE, HUB_VARIABLE
from .sandbox import HOME, Bounds, Walls, available

__all__ = [
    "GradingError",
    "kernel_environment",
    "python_folders",
    "walled_environment",
    "walls_for",
]

_HUB_PREFIX = HUB_VARIABLE.split("_")[0] + "_"  # every JUPYTERHUB_* variable


class GradingError(ValueError):
    """A mistake in how grading was asked for, or a course that cannot be graded as it is;
    the message says what to do."""


def kernel_environment(student, base=None) -> dict:
    """The environment of the kernel that runs ``student``'s submission.

    The student's id comes from nbgrader, which reads it off the submission's folder name.
    Nothing of the grader's own hub session reaches the kernel: not its user name (an
    instructor grading on JupyterHub) and above all not its API token, which the submission's
    code could otherwise read and use.

    Examples
    --------
    >>> base = {"JUPYTERHUB_USER": "teacher", "JUPYTERHUB_API_TOKEN": "secret", "PATH": "/bin"}
    >>> sorted(kernel_environment("s1234", base).items())
    [('DECOMPKIT_STUDENT', 's1234'), ('PATH', '/bin')]
    """
    env = dict(os.environ if base is None else base)
    for name in [name for name in env if name.startswith(_HUB_PREFIX)]:
        del env[name]
    if not isinstance(student, str) or not student.strip():
        raise ValueError(f"student must be a non-empty id, got {student!r}")
    env[GRADER_VARIABLE] = student
    return env


#: What of the grader's environment a walled kernel gets (and every LC_* variable).
_PASSED = (
    "PATH",
    "LANG",
    "LANGUAGE",
    "TZ",
    "PYTHONHASHSEED",
    "MPLBACKEND",
    "PYDEVD_DISABLE_FILE_VALIDATION",
    "OPENBLAS_NUM_THREADS",
    "OMP_NUM_THREADS",
    "MKL_NUM_THREADS",
)


def walled_environment(env: dict) -> dict:
    """The environment of a walled kernel: a few of the grader's variables (none that may
    hold a secret), and home, configuration and caches in the kernel's own scratch space."""
    kept = {k: v for k, v in env.items() if k in _PASSED or k.startswith("LC_")}
    return kept | {
        "HOME": HOME,
        "TMPDIR": "/tmp",
        "PYTHONNOUSERSITE": "1",
        "PYTHONDONTWRITEBYTECODE": "1",
        "IPYTHONDIR": f"{HOME}/.ipython",
        "JUPYTER_CONFIG_DIR": f"{HOME}/.jupyter",
        "JUPYTER_DATA_DIR": f"{HOME}/.local/share/jupyter",
        "JUPYTER_RUNTIME_DIR": f"{HOME}/.local/share/jupyter/runtime",
        "MPLCONFIGDIR": f"{HOME}/.config/matplotlib",
    }


def python_folders() -> tuple[str, ...]:
    """The folders a kernel needs to see (read-only): this Python and its packages."""
    import site
    import sysconfig

    found = [sys.prefix, sys.base_prefix, sys.exec_prefix, *site.getsitepackages()]
    found += [sysconfig.get_path(name) for name in ("stdlib", "platstdlib", "purelib", "platlib")]
    return tuple(dict.fromkeys(os.path.realpath(p) for p in found if p and os.path.isdir(p)))


def walls_for(bounds: Bounds) -> Walls:
    """The walls of every kernel of a run with ``bounds``; :class:`GradingError` (one line,
    with what to do) where they cannot be built."""
    walls = Walls(python_folders(), bounds)
    why = available(walls)
    if why:
        raise GradingError(
            f"cannot build walls around the grading kernels here ({why}); run it on Linux "
            "where user namespaces are allowed, or pass --no-sandbox to grade without walls "
            "(only for submissions you trust)"
        )
    return walls
