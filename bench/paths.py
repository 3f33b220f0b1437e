"""Where the benchmarks write their figures."""

from tests.harness.paths import REPO_ROOT

RESULTS_DIR = REPO_ROOT / "bench" / "results"
