"""What a submission shows, made safe to show: no script from a student reaches a browser.

(Placeholder: returns the notebook unchanged until the allow-list sanitiser lands.)
"""

from __future__ import annotations

__all__ = ["sanitize_notebook"]


def sanitize_notebook(nb):
    """``nb`` with every student-written markdown cell and rich output made safe to render."""
    return nb
