"""The course's settings, read from its ``nbgrader_config.py``: folders, time limits and the
bounds of every grading kernel's walls.

Grading reads nbgrader's configuration file itself (traitlets' loader, no nbgrader
application) so that a mistake in it is one line naming the setting and the value, not a
traceback. The defaults are those of ``nbgrader_config.py`` as the kit ships it. Nothing
here imports notebook machinery: a mistake in the command is found in a moment.
"""

from __future__ import annotations

from pathlib import Path

from .engine.environment import GradingError
from .engine.limits import Limits
from .engine.sandbox import Bounds

__all__ = ["GradingError", "load_config", "course_config", "setting", "settings"]


def load_config(root: Path, overrides: dict | None = None):
    from traitlets.config import Config, PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    for section, values in (overrides or {}).items():
        config.merge(Config({section: values}))
    return config


def setting(config, section: str, name: str, default):
    value = config.get(section, {}).get(name, default) if section in config else default
    return default if value is None else value


def course_config(root: Path):
    """The course's ``nbgrader_config.py`` as loaded, or a GradingError in one line when
    ``root`` is no course folder or its file cannot be read."""
    if not (root / "nbgrader_config.py").is_file():
        raise GradingError(
            f"{root} is not a course folder (no nbgrader_config.py); run the command in the "
            "course folder or pass --root"
        )
    try:
        return load_config(root)
    except Exception as error:  # noqa: BLE001 - traitlets raises what the file raises
        raise GradingError(
            f"{root / 'nbgrader_config.py'} cannot be read ({type(error).__name__}: "
            f"{str(error).splitlines()[0] if str(error) else ''}); fix it, or copy it from the kit"
        ) from None


def settings(root: Path) -> dict:
    """The course's folders and grading bounds, from its ``nbgrader_config.py``."""
    config = course_config(root)
    return {
        "config": config,
        "course_id": str(setting(config, "CourseDirectory", "course_id", "default_course")),
        "source": str(setting(config, "CourseDirectory", "source_directory", "source")),
        "submitted": str(setting(config, "CourseDirectory", "submitted_directory", "submitted")),
        "autograded": str(setting(config, "CourseDirectory", "autograded_directory", "autograded")),
        "limits": Limits(
            cell=float(setting(config, "Execute", "timeout", 30) or 30),
            notebook=float(setting(config, "GradingLimits", "notebook_time_limit", 180)),
            student=float(setting(config, "GradingLimits", "student_time_limit", 600)),
            output_bytes=int(setting(config, "CapOutputBytes", "max_bytes", 100_000)),
        ),
        "bounds": _bounds(config),
    }


def _bounds(config):
    """The walls' bounds of every kernel (``c.GradingLimits.kernel_*`` in megabytes)."""
    values = {
        "memory": ("kernel_memory_mb", 2048, 2**20),
        "processes": ("kernel_processes", 64, 1),
        "scratch": ("kernel_scratch_mb", 256, 2**20),
    }
    found = {}
    for name, (option, default, unit) in values.items():
        value = setting(config, "GradingLimits", option, default)
        if isinstance(value, bool) or not isinstance(value, (int, float)) or not value >= 1:
            raise GradingError(
                f"c.GradingLimits.{option} in nbgrader_config.py must be a number >= 1, "
                f"got {value!r}"
            )
        found[name] = int(value * unit)
    return Bounds(**found)
