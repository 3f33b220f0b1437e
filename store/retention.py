"""Delete learners who have not saved anything for N days: `python -m store.retention --days 30`.

It uses the same store as the app ($LAB_DATABASE_URL, else the SQLite file in $LAB_DATA_DIR, else
`.lab-data/`) unless --url names another, and prints each learner it removed. Ids are shortened to
their first 8 characters in the output: a whole id would let anyone reading the log open that record.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from datetime import UTC, datetime, timedelta

from store.engine import default_url
from store.learner_store import LearnerStore, Removed

SHOWN_ID_CHARS = 8


def describe(removed: Sequence[Removed], days: int) -> str:
    """What a retention run removed, one line per learner."""
    plural = "" if len(removed) == 1 else "s"
    lines = [f"Removed {len(removed)} learner{plural} with nothing saved in the last {days} days."]
    lines += [
        f"  {r.learner_id[:SHOWN_ID_CHARS]}…  started {r.created_at:%Y-%m-%d %H:%M}, "
        f"last saved {r.updated_at:%Y-%m-%d %H:%M} UTC, {r.rows} row{'' if r.rows == 1 else 's'} of work"
        for r in removed
    ]
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    """Parse the command line, delete idle learners and print what went."""
    parser = argparse.ArgumentParser(prog="python -m store.retention", description=__doc__.splitlines()[0])
    parser.add_argument(
        "--days", type=int, required=True, help="keep learners who saved within this many days"
    )
    parser.add_argument("--url", default=None, help="database URL (default: the app's own store)")
    args = parser.parse_args(argv)
    if args.days < 1:
        parser.error("--days must be at least 1")
    store = LearnerStore.open(args.url or default_url())
    removed = store.remove_idle(datetime.now(UTC) - timedelta(days=args.days))
    print(describe(removed, args.days))
    return 0


if __name__ == "__main__":
    sys.exit(main())
