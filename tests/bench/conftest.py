"""Helpers shared by the load client's tests."""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator

import pytest
from streamlit.proto.BackMsg_pb2 import BackMsg
from streamlit.proto.ForwardMsg_pb2 import ForwardMsg

from tests.harness.paths import REPO_ROOT
from tests.harness.server import StreamlitServer


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[StreamlitServer]:
    """A real `streamlit run Home.py` on a free loopback port, logging to a file the test can check."""
    log = tmp_path_factory.mktemp("server") / "server.log"
    with StreamlitServer(script=REPO_ROOT / "Home.py", post_script_gc=False, log_path=log) as running:
        yield running


@pytest.fixture(scope="module")
def haproxy() -> None:
    """Skip where deploy/proxy.sh cannot run HAProxy, except under CI=true, where that fails: `.ci/run`
    installs Debian's haproxy, and a test that silently skips there is not a passing test."""
    missing = [tool for tool in ("haproxy", "openssl") if shutil.which(tool) is None]
    if missing:
        reason = f"{' and '.join(missing)} not installed (Debian: apt-get install haproxy)."
        if os.environ.get("CI", "").lower() == "true":
            pytest.fail(f"{reason} CI must run the proxy tests: .ci/run installs Debian's haproxy.")
        pytest.skip(reason)


def sent_states(msg: BackMsg) -> dict[str, object]:
    """Widget id -> value, as a rerun_script message carries them (arrays as lists)."""
    states = {}
    for state in msg.rerun_script.widget_states.widgets:
        field = state.WhichOneof("value")
        assert field is not None
        value = getattr(state, field)
        states[state.id] = list(value.data) if field.endswith("array_value") else value
    return states


def finished(*fragments: str) -> bytes:
    """The script_finished message of a run of these fragments, or of the whole page when none."""
    msg = ForwardMsg()
    msg.script_finished = (
        ForwardMsg.FINISHED_FRAGMENT_RUN_SUCCESSFULLY if fragments else ForwardMsg.FINISHED_SUCCESSFULLY
    )
    msg.metadata.run.fragment_ids.extend(fragments)
    return msg.SerializeToString()
