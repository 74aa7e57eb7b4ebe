"""Test-wide set-up shared by the doctests in src/ and the tests in tests/."""

import os


def pytest_configure(config):
    """Run every test with the lecture's numbers: no grader or hub id from the caller's shell
    (an instructor testing on JupyterHub has JUPYTERHUB_USER set) may pick a student variant.
    Cleared before collection, since building the grading bank already draws variants. Nor
    may a real model named in DECOMPKIT_MODEL be called: the lab's tests run offline."""
    for name in ("DECOMPKIT_STUDENT", "JUPYTERHUB_USER", "DECOMPKIT_MODEL"):
        os.environ.pop(name, None)
