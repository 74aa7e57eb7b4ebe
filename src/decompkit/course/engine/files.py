"""Files whose names came with a submission, opened without following a link.

A submission's folder, an LMS download or a zip may hold a link where a file is expected (to
``solutions/``, ``/etc/shadow``, another student's work); a name checked first and opened
after could have become one meanwhile. :func:`open_regular` opens the name itself
(``O_NOFOLLOW``) and checks what it opened, so the check and the read are of one file.
Standard library only: the kernels' walls use it in a freshly forked process.
"""

from __future__ import annotations

import errno
import os
import stat

__all__ = ["open_regular"]


def open_regular(path):
    """The regular file at ``path`` opened for reading in binary, or None when the name is a
    link or not a regular file (a folder, a pipe, a device).

    Raises
    ------
    OSError
        When the name cannot be opened for another reason (it does not exist, no permission).

    Examples
    --------
    >>> import os, tempfile
    >>> folder = tempfile.mkdtemp()
    >>> os.symlink("/etc/hostname", os.path.join(folder, "notes.txt"))
    >>> open_regular(os.path.join(folder, "notes.txt")) is None
    True
    """
    try:
        handle = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError as error:
        if error.errno == errno.ELOOP:
            return None
        raise
    opened = os.fdopen(handle, "rb")
    if not stat.S_ISREG(os.fstat(handle).st_mode):
        opened.close()
        return None
    return opened
