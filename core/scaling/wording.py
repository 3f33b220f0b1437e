"""What the lab asks: each part's question, options and decisions, and the synthesis choices (the page's
running text is in `data/lessons/scaling`)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from core import validate
from core.datafiles import require
from core.scaling.tracks import Track

PARTS = ("A", "B", "C", "D", "E")


@dataclass(frozen=True)
class PartText:
    """A part's title, its prediction question and its decision, with option ids and labels."""

    key: str
    tab: str
    minutes: int
    title: str
    prompt: str
    options: dict[str, str]
    decision_prompt: str
    decisions: dict[str, str]


@dataclass(frozen=True)
class SynthesisText:
    """The choices of the synthesis: plans, reopening triggers, remaining limitations."""

    plans: dict[str, str]
    triggers: dict[str, str]
    limitations: dict[str, str]
    model_parallel_plans: tuple[str, ...]
    not_needed_note: str
    does_not_fit_note: str

    def plan_labels(self, track: Track) -> dict[str, str]:
        """Plan labels that say which plans this track's model cannot use or does not need."""

        def note(plan: str) -> str:
            if plan in self.model_parallel_plans:
                return "" if track.model_parallel else f" {self.not_needed_note}"
            return f" {self.does_not_fit_note}" if track.model_parallel else ""

        return {plan: label + note(plan) for plan, label in self.plans.items()}


def _labels(raw: Any, where: str) -> dict[str, str]:
    require(isinstance(raw, dict) and len(raw) >= 2, f"{where} needs at least two options.")
    require(
        all(isinstance(v, str) and v.strip() for v in raw.values()), f"{where}: every option needs a label."
    )
    return dict(raw)


def parse_part(raw: Mapping[str, Any]) -> PartText:
    """One part's validated question and decision wording."""
    key = validate.text(raw, "key", "A part")
    where = f"Part {key}"
    return PartText(
        key=key,
        tab=validate.text(raw, "tab", where),
        minutes=validate.whole_number(raw.get("minutes"), f"{where}: minutes"),
        title=validate.text(raw, "title", where),
        prompt=validate.text(raw, "prompt", where),
        options=_labels(raw.get("options"), f"{where} prediction"),
        decision_prompt=validate.text(raw, "decision_prompt", where),
        decisions=_labels(raw.get("decisions"), f"{where} decision"),
    )


def parse_synthesis(raw: Mapping[str, Any]) -> SynthesisText:
    """The validated synthesis choices; model-parallel plans must be among the plans."""
    plans = _labels(raw.get("plans"), "Synthesis plans")
    model_parallel_plans = validate.items(
        raw.get("model_parallel_plans"),
        "Synthesis: model_parallel_plans must name some, not all, of the plans.",
    )
    require(
        set(model_parallel_plans) < set(plans),
        "Synthesis: model_parallel_plans must name some, not all, of the plans.",
    )
    return SynthesisText(
        plans=plans,
        triggers=_labels(raw.get("triggers"), "Synthesis triggers"),
        limitations=_labels(raw.get("limitations"), "Synthesis limitations"),
        model_parallel_plans=tuple(model_parallel_plans),
        not_needed_note=validate.text(raw, "not_needed_note", "Synthesis"),
        does_not_fit_note=validate.text(raw, "does_not_fit_note", "Synthesis"),
    )
