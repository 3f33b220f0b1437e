"""The Scaling out lab's predict, reveal and capture widgets: one locked prediction per part, the
result it hid, whether the prediction held, and a snapshot of the evidence."""

from __future__ import annotations

import functools
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import streamlit as st

from core import lessons
from core.scaling import evidence
from core.scaling.outcomes import graded_outcomes
from core.scaling.scenarios import load_scaling, track_label
from core.settings_schema import section
from ui import state
from ui.charts import ChartRecipe, draw
from ui.lock import lock_form
from ui.settings import persistent
from ui.tables import Format, arrow_rows, stacked

SECTION = "scaling"


@dataclass(frozen=True)
class Reveal:
    """What one part shows once its prediction is locked: a chart and table, the outcome the prediction
    is held against, and the figures its snapshot keeps."""

    chart: ChartRecipe  # its key (every input it depends on) and builder: `ui.scaling_charts.part_chart`
    description: str
    rows: Sequence[Mapping[str, Any]]
    formats: Mapping[str, Format]
    columns_by: str  # the field whose value heads each row's column once the table is stacked
    outcome: str
    summary: str
    inputs: dict[str, Any]
    baseline: dict[str, Any]
    result: dict[str, Any]
    fixed: str | None = None  # the decision the part's controls already made
    refused: Mapping[str, str] = field(default_factory=dict)  # decision -> why it cannot be saved
    note: Callable[[], None] | None = None  # drawn between the verdict and the capture form
    header: str = "{}"  # how a `columns_by` value reads as a column heading, such as "{} GPUs"


def part_heading(part: str) -> None:
    """The part's full title and how long it takes."""
    text = load_scaling().parts[part]
    st.subheader(text.title)
    st.caption(lessons.sentence("scaling", "part_minutes", minutes=text.minutes))


def setting_radio(label: str, name: str, *, labels: Callable[[Any], str | None]) -> None:
    """A horizontal radio over one setting's choices in the schema, remembered across pages.
    `labels` must pickle (a core dict's `.get` or a bound method), since session state is pickled."""
    choices = section(SECTION).field(name).choices
    st.radio(label, choices, format_func=labels, horizontal=True, **persistent(SECTION, name))


def setting_slider(label: str, name: str, **options: Any) -> None:
    """A slider over one setting's range in the schema, remembered across pages."""
    field_ = section(SECTION).field(name)
    st.slider(label, field_.min, field_.max, step=field_.step, **options, **persistent(SECTION, name))


def records(name: str) -> dict[str, Any]:
    """The learner's record `name` as a dict, empty if missing or not a mapping."""
    value = state.record(name)
    return dict(value) if isinstance(value, Mapping) else {}


def locked_prediction(part: str) -> str | None:
    """The learner's locked prediction for `part`, if any."""
    return evidence.prediction_of(state.record(evidence.PREDICTIONS), part)


def _lock(part: str, track_key: str, choice: str) -> None:
    try:
        updated, accepted = evidence.lock_prediction(records(evidence.PREDICTIONS), part, choice)
        tracks = evidence.record_prediction_track(records(evidence.PREDICTION_TRACKS), part, track_key)
    except ValueError:  # only a client that bypasses the page sends a value the radio does not offer
        return
    if accepted:
        # One transaction: two tabs locking this part at once keep one tab's guess with its own track.
        state.store_records({evidence.PREDICTION_TRACKS: tracks, evidence.PREDICTIONS: updated})


def prediction_track(part: str, settings: Mapping[str, Any]) -> str:
    """The track `part`'s prediction was locked on (the current one for a prediction without a track)."""
    return evidence.prediction_track(state.record(evidence.PREDICTION_TRACKS), part, settings["track"])


def prediction_gate(part: str, settings: Mapping[str, Any]) -> bool:
    """The prediction form until a prediction is locked; True once it is (show the result). After the
    hand-in a part never predicted opens too, ungraded: the hand-in locks answers, not the tools."""
    text = load_scaling().parts[part]
    locked = locked_prediction(part)
    if locked is not None:
        st.caption(
            lessons.sentence(
                "scaling",
                "locked_prediction",
                option=text.options[locked],
                track=track_label(prediction_track(part, settings)),
            )
        )
        return True
    if state.read_only():
        st.caption(lessons.sentence("scaling", "not_predicted"))
        return True
    lock_form(
        f"scaling.predict.{part}",
        text.prompt,
        text.options,
        functools.partial(_lock, part, settings["track"]),
    )
    st.caption(lessons.sentence("scaling", "result_hidden"))
    return False


def reveal(part: str, shown: Reveal, settings: Mapping[str, Any]) -> None:
    """The chart with its description, the table, the verdict on the prediction, then the capture form."""
    draw(*shown.chart, description=shown.description)
    st.caption(shown.description)
    st.table(
        arrow_rows(stacked(shown.rows, by=shown.columns_by, header=shown.header, formats=shown.formats)),
        hide_index=True,
    )
    _verdict(part, shown, settings)
    if shown.note is not None:
        shown.note()
    _capture_form(part, shown, settings)


def _verdict(part: str, shown: Reveal, settings: Mapping[str, Any]) -> None:
    """Whether the locked prediction held, graded on the numbers of the track it was locked on; nothing for
    a part handed in without one."""
    text, locked = load_scaling().parts[part], locked_prediction(part)
    if locked is None:
        return
    locked_on = prediction_track(part, settings)
    if locked_on == settings["track"]:
        if locked == shown.outcome:
            st.success(
                lessons.sentence("scaling", "prediction_held", summary=shown.summary),
                icon=":material/check_circle:",
            )
        else:
            happened = text.options.get(shown.outcome, "none of the options")
            st.warning(
                lessons.sentence("scaling", "prediction_missed", happened=happened, summary=shown.summary),
                icon=":material/info:",
            )
        return
    # The learner switched track after locking: grade on the track they predicted for.
    outcome = graded_outcomes(settings, records(evidence.PREDICTION_TRACKS))[part]
    figures = {
        "locked_track": track_label(locked_on),
        "track": track_label(settings["track"]),
        "answer_here": text.options.get(shown.outcome, "none of the options"),
        "summary": shown.summary,
    }
    if locked == outcome:
        st.success(
            lessons.sentence("scaling", "prediction_held_elsewhere", **figures),
            icon=":material/check_circle:",
        )
    else:
        happened = text.options.get(outcome, "none of the options")
        st.warning(
            lessons.sentence("scaling", "prediction_missed_elsewhere", happened=happened, **figures),
            icon=":material/info:",
        )


def _flash(part: str) -> str:
    return f"scaling.flash.{part}"


def _capture(part: str, settings: Mapping[str, Any], shown: Reveal) -> None:
    decision = shown.fixed or st.session_state.get(f"scaling.decide.{part}")
    if not isinstance(decision, str):  # nothing chosen, or a value no radio sends
        st.session_state[_flash(part)] = lessons.sentence("scaling", "choose_a_decision")
        return
    if decision in shown.refused:
        st.session_state[_flash(part)] = shown.refused[decision]
        return
    st.session_state.pop(_flash(part), None)
    try:
        snapshot = evidence.make_snapshot(
            part=part,
            settings=settings,
            prediction=locked_prediction(part) or "",
            inputs=shown.inputs,
            baseline=shown.baseline,
            result=shown.result,
            decision=decision,
        )
    except ValueError:  # a decision the radio does not offer: only a client bypassing the page sends one
        return
    state.store_record(evidence.SNAPSHOTS, {**records(evidence.SNAPSHOTS), part: snapshot})


def _capture_form(part: str, shown: Reveal, settings: Mapping[str, Any]) -> None:
    """The decision (or the fixed one the controls already made) and the button that saves this part's
    evidence, then the snapshot's status."""
    text = load_scaling().parts[part]
    saved = records(evidence.SNAPSHOTS).get(part)
    saved_decision = (
        saved.get("decision") if isinstance(saved, Mapping) and evidence.valid_snapshot(part, saved) else None
    )
    options = list(text.decisions)
    with st.form(key=f"scaling.decide.{part}.form"):
        if shown.fixed:
            st.markdown(
                lessons.sentence(
                    "scaling",
                    "fixed_decision",
                    prompt=text.decision_prompt,
                    decision=text.decisions[shown.fixed],
                )
            )
        else:
            st.radio(
                text.decision_prompt,
                options,
                index=options.index(saved_decision) if saved_decision else None,
                format_func=text.decisions.get,
                key=f"scaling.decide.{part}",
                disabled=state.read_only(),
            )
        st.form_submit_button(
            "Capture snapshot",
            icon=":material/photo_camera:",
            on_click=_capture,
            args=(part, settings, shown),
            key=f"scaling.capture.{part}",
            disabled=state.read_only(),
        )
    if flash := st.session_state.get(_flash(part)):
        st.info(flash)
    _snapshot_status(part, settings)


def _snapshot_status(part: str, settings: Mapping[str, Any]) -> None:
    """Missing, stale (and why) or current, in one line."""
    snapshots = records(evidence.SNAPSHOTS)
    status = evidence.snapshot_status(part, snapshots, settings)
    if status == evidence.MISSING:
        st.caption(lessons.sentence("scaling", "no_snapshot"))
    elif status == evidence.STALE:
        words = {
            "track": lessons.sentence("scaling", "changed_track"),
            "mode": lessons.sentence("scaling", "changed_mode"),
            "pool": lessons.sentence("scaling", "changed_pool"),
        }
        changed = " and ".join(words[name] for name in evidence.changed_upstream(part, snapshots, settings))
        st.error(lessons.sentence("scaling", "stale_snapshot", changed=changed), icon=":material/history:")
    else:
        text = load_scaling().parts[part]
        snapshot = snapshots[part]
        st.success(
            lessons.sentence(
                "scaling",
                "snapshot_saved",
                prediction=text.options[snapshot["prediction"]],
                decision=text.decisions[snapshot["decision"]],
            ),
            icon=":material/inventory_2:",
        )
