import fcntl

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Property tests run on a shared 2-core CI machine: no per-example deadline
# (timing noise is not a correctness failure), a fixed example budget.
settings.register_profile(
    "kit", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("kit")


@pytest.fixture(scope="session")
def lecture_page_index(tmp_path_factory, request):
    """``index.html`` of the lecture page at the lecture's numbers, built once per test run:
    tests/test_page_build.py and the browser tests read the same folder (on pytest-xdist
    workers, the first to ask builds it under a lock in the run's shared temporary folder)
    and copy it before changing anything. A build takes tens of seconds of figures."""
    from decompkit.page import build_page

    worker = getattr(request.config, "workerinput", None)
    if worker is None:  # one process: its own temporary folder
        return build_page(tmp_path_factory.mktemp("lecture-page") / "page")
    shared = tmp_path_factory.getbasetemp().parent  # this run's, shared by its workers
    index = shared / "lecture-page" / "index.html"
    with open(shared / "lecture-page.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not index.exists():
            staging = shared / f"lecture-page-{worker['workerid']}"
            build_page(staging)
            staging.rename(index.parent)  # whole or not at all: a reader never sees half
    return index
