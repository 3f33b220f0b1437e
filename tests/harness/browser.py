"""What a browser keeps between connections, and what the lab's identity component does in it.

A real browser keeps its cookies (the workshop proxy's replica affinity, the learner id's cookie copy)
and the learner id in its localStorage, and the identity component's JavaScript reports that id to the
app. `Browser` and `identify` do the same for a protocol-level session (`load_client.Session`).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field

from tests.harness.load_client import RunResult, Session, SessionError
from tests.harness.page_model import WidgetInfo

AFFINITY_COOKIE = "LAB_REPLICA"  # deploy/haproxy.cfg; proxy.sh names the replicas app1, app2, ...
IDENTITY_COMPONENT = "lab_learner_identity"  # ui/identity.py
# ui/identity.py's COOKIE, named here so that a checkout from before it can run this client too.
IDENTITY_COOKIE = "lab_learner"


@dataclass
class Browser:
    """What a browser keeps between connections: its cookies and the learner id in its localStorage."""

    cookies: dict[str, str] = field(default_factory=dict)
    stored_id: str | None = None

    @property
    def replica(self) -> str:
        """The replica the proxy's cookie sends this browser to ("" before the first request)."""
        return self.cookies.get(AFFINITY_COOKIE, "")


def identity_component(session: Session) -> WidgetInfo:
    """The learner-identity component the session's page drew."""
    widgets = session.model.widgets.values()
    found = [w for w in widgets if w.kind == "bidi_component" and IDENTITY_COMPONENT in w.label]
    if len(found) != 1:
        raise SessionError("identity", f"the page drew {len(found)} identity components, not one")
    return found[0]


async def identify(session: Session, browser: Browser) -> RunResult | None:
    """Do what the identity component's JavaScript does: keep an id (the one the app asks it to adopt,
    else the stored one, else the one the app knows from the cookie, else the one offered), copy it into
    the cookie, and report it once unless the app knows it. The report's run, or None without one."""
    component = identity_component(session)
    data = json.loads(component.data or "{}")
    kept = data.get("adopt") or browser.stored_id or data.get("known") or data["candidate"]
    browser.stored_id = kept
    browser.cookies[IDENTITY_COOKIE] = kept
    if kept == data.get("known"):
        return None
    session.model.set_value(component.id, json.dumps({"learner_id": kept}))
    return await rerun_here(session)


async def rerun_here(session: Session) -> RunResult:
    """Rerun the page the session is on, as the browser does (it names the page, not the main script)."""
    return await session.rerun(page_hash=session.model.current_page)
