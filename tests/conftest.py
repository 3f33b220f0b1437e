"""Settings for the whole suite."""

import os
from pathlib import Path

from hypothesis import configuration

# Hypothesis keeps its example database and caches in ./.hypothesis by default, which would put
# them in the checkout. Keep them in the user's cache folder instead (failures still replay).
_CACHE = Path(os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache")
configuration.set_hypothesis_home_dir(_CACHE / "reading-a-training-run" / "hypothesis")
