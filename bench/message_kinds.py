"""What a script run's messages carry: each ForwardMsg named by its element's or block's type, and a run
log's messages tallied by those names. Blocks (columns, containers, forms, fragments' own containers)
cost a run about what an element does, so a page's layout shows in its count as well as its content."""

from __future__ import annotations

from typing import Any


def message_kind(msg: Any) -> str:
    """What a ForwardMsg carries: "element:markdown", "block:column", or the message's own type for the
    rest ("page_info_changed")."""
    kind = msg.WhichOneof("type")
    if kind != "delta":
        return str(kind)
    delta = msg.delta
    change = delta.WhichOneof("type")
    if change == "new_element":
        return f"element:{delta.new_element.WhichOneof('type')}"
    if change == "add_block":
        return f"block:{delta.add_block.WhichOneof('type')}"
    return f"delta:{change}"


def message_kind_shares(runs: list[dict[str, Any]]) -> dict[str, float]:
    """Each kind of message the logged runs queued as a share of them all, most first; runs logged before
    kinds were counted add nothing."""
    counts: dict[str, int] = {}
    for run in runs:
        for kind, count in run.get("message_kinds", {}).items():
            counts[kind] = counts.get(kind, 0) + count
    total = sum(counts.values()) or 1
    most_first = sorted(counts.items(), key=lambda item: (-item[1], item[0]))
    return {kind: count / total for kind, count in most_first}
