"""A join link's code stays in the Room code field when the browser reruns before the field has reported
it, as the browser does when the learner-identity check answers first on a busy machine.

A real `streamlit run Home.py` on a free loopback port, driven over Streamlit's own protocol by the
benchmark's client, which can send a rerun with exactly the widget states a browser would have.
"""

from __future__ import annotations

import asyncio
from datetime import timedelta

from streamlit.proto.BackMsg_pb2 import BackMsg

from tests.harness.load_client import Session
from tests.harness.page_model import PageModel
from ui.rooms import room_store


def _shown(model: PageModel) -> str:
    """What the Room code field shows: the value the server pushed, else its default."""
    [field] = [w for w in model.run_widgets.values() if w.kind == "text_input" and w.label == "Room code"]
    return str(field.pushed_value if field.pushed else field.default)


def _rerun_before_the_field_reports(model: PageModel) -> BackMsg:
    """The browser's next rerun when only the identity component has reported: no field's state in it."""
    msg = BackMsg()
    msg.rerun_script.page_script_hash = model.current_page
    msg.rerun_script.query_string = model.query_string  # the server has taken the code off the address
    return msg


async def _follow(port: int, code: str) -> list[str]:
    session = Session(port=port, marker="bench-s903-link", timeout_s=60)
    session.model.query_string = f"room={code}"
    try:
        await session.connect("")
        shown = [_shown(session.model)]
        await session._request(_rerun_before_the_field_reports(session.model), 0.0)
        shown.append(_shown(session.model))
    finally:
        await session.close()
    return shown


def test_the_code_of_a_join_link_survives_a_rerun_that_does_not_carry_the_field(server) -> None:
    code = room_store().create_room(capacity=5, lifetime=timedelta(hours=1)).code
    assert asyncio.run(_follow(server.port, code)) == [code, code]
    assert server.log_problems() == 0
