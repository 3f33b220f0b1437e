"""Every chart test also checks that its builder names each encoding's channel class.

Given a shorthand string or `alt.value(...)`, Altair 6 finds the channel's class by hashing every class
of the Vega-Lite schema, about 6 ms each time on our machine against 0.06 ms for `alt.X("a:Q")` or
`alt.YValue(0)`. A chart whose key changes with a slider is rebuilt on a click, so those lookups were
a large share of a lesson page's CPU (docs/architecture.md).
"""

from typing import Any

import pytest
from altair.utils.schemapi import SchemaBase


def _refuse_lookup(cls: type, *_args: Any, **_kwargs: Any) -> Any:
    raise AssertionError(
        f"A chart builder made Altair look up {cls.__name__} by its schema: pass a channel class to "
        'encode() (alt.X("a:Q"), alt.Tooltip("a:N"), alt.YValue(0)), not a string or alt.value().'
    )


@pytest.fixture(autouse=True)
def channels_named(monkeypatch: pytest.MonkeyPatch) -> None:
    """Fail any chart test whose builder leaves Altair to find a channel's class itself."""
    monkeypatch.setattr(SchemaBase, "from_dict", classmethod(_refuse_lookup))
