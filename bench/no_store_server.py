"""`streamlit run` with a learner store that keeps nothing, to measure what the real store costs.

    python -m bench.no_store_server run Home.py [streamlit flags]

The app's store (SQLite by default, ui/database.py) is swapped, in this server process only, for
one that accepts every write and forgets it: the script does everything it does with a store
except the database round trips. `python -m bench.run_load --store off` starts the server this way.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import streamlit as st
from streamlit.web.cli import main

from ui import identity, rooms, state


@dataclass(frozen=True)
class _Learner:
    resume_code: str = "NO-STORE"


class NullStore:
    """Accepts every write, stores nothing, loads an empty record."""

    def learner(self, learner_id: str) -> _Learner:
        """Any learner exists, with the same resume code."""
        return _Learner()

    def load(self, learner_id: str) -> dict[str, Any]:
        """An empty record."""
        return {state.ANSWERS: {}, state.SETTINGS: {}, state.RECORDS: {}, state.HANDED_IN_AT: None}

    def merge(self, learner_id: str, work: dict[str, Any]) -> dict[str, Any]:
        """The session's own work, as if stored."""
        return work

    def open_record(
        self, learner_id: str, work: dict[str, Any], *, shown: dict[str, dict[str, Any]]
    ) -> tuple[dict[str, Any], str]:
        """The session's own work, the settings it only showed under the ones it changed, as if stored."""
        sections = {
            section: {**shown.get(section, {}), **work["settings"].get(section, {})}
            for section in {*shown, *work["settings"]}
        }
        return {**work, state.SETTINGS: sections}, _Learner().resume_code

    def put_setting(self, learner_id: str, section: str, name: str, value: Any) -> dict[str, Any]:
        """The section as this session holds it (the value is already in it): what a store that held the
        same would give back. Answering True here made every settings page fail."""
        return dict(st.session_state[state.SETTINGS].get(section, {}))

    def put_settings_if_absent(self, learner_id: str, section: str, values: Any) -> dict[str, Any]:
        """The section as this session holds it (the defaults are already in it)."""
        return dict(st.session_state[state.SETTINGS].get(section, {}))

    def __getattr__(self, name: str) -> Any:
        # add_answer, add_prediction, hand_in, put_settings, put_record, ...: written, and forgotten.
        return lambda *args, **kwargs: True


def install() -> None:
    """Swap the app's store for a NullStore in this process (only the benchmark's server calls this)."""
    null = NullStore()
    state.learner_store = identity.learner_store = lambda: null  # type: ignore[assignment,return-value]
    rooms.membership = lambda: None  # in no room: no room queries either


if __name__ == "__main__":
    install()
    main(prog_name="streamlit")
