"""Load what every learner's first run needs before the server takes its first visitor.

A fresh process otherwise pays, inside the first learner's first script run, for importing the
lab's modules and Altair, pandas and pyarrow, and for reading and working out the data every page
shares: several seconds on a small VM, which that learner waits with a blank page. `serve.py` calls
`warm_caches` from its startup hook, so a replica only answers its health check once this is done.
Everything loaded here is content, the same for every learner; nothing about a learner is touched.
"""

from __future__ import annotations

import gc
import importlib
import logging
import pkgutil
import time
from pathlib import Path

from server.decided_once import DecidedOnce

_LOGGER = logging.getLogger(__name__)
_ROOT = Path(__file__).resolve().parent.parent
# Packages whose modules the pages import; their data loaders are cached per process.
PACKAGES = ("core", "charts", "ui", "server", "store")
# Libraries Streamlit imports lazily on the first chart or table.
LIBRARIES = ("altair", "pandas", "pyarrow", "streamlit.elements.vega_charts", "streamlit.elements.arrow")


def import_all() -> int:
    """Import every module of the lab's packages and the libraries charts and tables need; count them."""
    count = 0
    for name in LIBRARIES:
        importlib.import_module(name)
        count += 1
    for package in PACKAGES:
        for module in pkgutil.walk_packages([str(_ROOT / package)], prefix=f"{package}."):
            if module.name.endswith("__main__"):
                continue  # command-line entry points run when imported
            importlib.import_module(module.name)
            count += 1
    return count


def load_shared_data() -> None:
    """Read and work out the content every page draws from (all cached per process by core)."""
    from core import lessons
    from core.diagnose.columns import guess_mapping
    from core.diagnose.detectors import RunContext
    from core.diagnose.examples import load_examples
    from core.diagnose.reading import example_reading, example_table
    from core.questions import load_bank
    from core.run_a import brief_figures, run_a_timeline
    from core.settings_schema import load_schema
    from ui.run_a_charts import warm_run_a_charts
    from ui.scaling_charts import warm_scaling_charts

    load_bank()
    load_schema()
    lessons.all_templates()
    run_a_timeline()
    brief_figures()
    warm_run_a_charts()  # a fixed ten, or the first learner to pick each one waits for it
    # Scaling out at its defaults, where every learner starts: each part's figures and chart, or the
    # first learner to reveal each part waits for its chart (30-90 ms of CPU in a fresh process).
    warm_scaling_charts()
    for found in load_examples():
        table = example_table(found.file)
        example_reading(found.file, guess_mapping(table.columns), RunContext(classes=found.classes))


def warm_caches() -> None:
    """Import the lab and load its shared data; a failure is logged, and the first run does the work."""
    start = time.perf_counter()
    try:
        modules = import_all()
        load_shared_data()
    except Exception:  # the app must still start: its first run will report the same problem
        _LOGGER.exception("Warming the per-process caches failed; the first visitor will wait instead.")
        return
    _LOGGER.info("Warmed %d modules and the shared data in %.1f s.", modules, time.perf_counter() - start)


def freeze_loaded() -> int:
    """Take everything the process holds now out of the cyclic garbage collector's scans; how many objects.

    Called once warm: the lab, its libraries and the shared data live as long as the process, yet every
    full collection walked them all again (about 186,000 objects, 45 ms on an idle core and up to 240 ms
    under a burst, holding every session's run meanwhile; bench/README.md, twenty-fifth round). Garbage
    is collected first, so none of it is kept; objects freed by reference counting are freed as before,
    and everything made later (the sessions' state) is collected as before.
    """
    gc.collect()
    gc.freeze()
    return gc.get_freeze_count()


_froze = DecidedOnce(lambda: freeze_loaded() > 0)


def freeze_once() -> bool:
    """`freeze_loaded` on the first call in this process only, for an entry point run again on every visit;
    whether it froze anything. (Asking `gc.get_freeze_count()` instead walks every frozen object.)"""
    return _froze()
