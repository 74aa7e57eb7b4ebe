"""The static lecture page: the explorers in one folder (``index.html`` and its backgrounds)
that runs in any browser with no Python and no network (``python3 kit.py page``; see
docs/lecture-page.md). Its builder imports the explorers (``widgets``), the notebooks' numbers
(``exercises``) and through them the figures and the maths; nothing in the package imports it.
"""

from . import build
from .build import *  # noqa: F403

__all__ = [*build.__all__]
