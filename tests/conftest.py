import matplotlib
from hypothesis import HealthCheck, settings

matplotlib.use("Agg")

# Property tests run on a shared 2-core CI machine: no per-example deadline
# (timing noise is not a correctness failure), a fixed example budget.
settings.register_profile(
    "kit", deadline=None, max_examples=100, suppress_health_check=[HealthCheck.too_slow]
)
settings.load_profile("kit")
