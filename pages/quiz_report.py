"""Quiz and report: the last marked questions, the learner's report, downloads, restore and hand-in."""

import functools
from datetime import UTC, datetime
from typing import Any

import streamlit as st

from core import lessons, progress_file
from core.memory import to_gb
from core.memory.view import SECTION as MEMORY_SECTION
from core.memory.view import budget_view
from core.progress import quiz_ids
from core.questions import load_bank
from core.report.contents import SYNTHESIS_HEADINGS, build_report, scaling_progress, unanswered_quiz
from core.report.figures import BudgetFigures, LayerFigures
from core.report.markdown import render_markdown
from core.report.moments import utc_timestamp
from core.run_a import brief_sentence
from core.settings_schema import load_schema
from core.signing import Verdict
from core.workloads import linear_layer
from ui import state
from ui.frame import lesson_page
from ui.marked import marked_questions
from ui.nav import next_link, page_for, title_of
from ui.prose import SUBHEADER, TITLE, heading, prose
from ui.signing import signing_key
from ui.tables import arrow_rows

FLASH_KEY = "quiz_report.flash"
bank = load_bank()


def layer_figures() -> LayerFigures | None:
    """The layer left on the Linear layer page, or None if the learner has not been there."""
    if not state.stored_settings("linear"):
        return None
    chosen = state.recorded_settings("linear")
    cost = linear_layer(
        n_in=chosen["n_in"], m_out=chosen["m_out"], batch=chosen["batch"], dtype=chosen["dtype"]
    )
    return LayerFigures(n_in=cost.n_in, m_out=cost.m_out, batch=cost.batch, flops=cost.flops)


def budget_figures() -> BudgetFigures | None:
    """The budget left on the Memory budget page, or None if the learner has not been there."""
    if not state.stored_settings(MEMORY_SECTION):
        return None
    view = budget_view(state.recorded_settings(MEMORY_SECTION))
    return BudgetFigures(
        parameters=view.parameter_count,
        total_gb=view.verdict.total_gb,
        device_gb=view.verdict.device_gb,
        activations_gb=to_gb(view.terms.activations_bytes),
        optimizer_gb=to_gb(view.terms.optimizer_state_bytes),
        device_label=view.device_label,
    )


def _restore(key: str | None) -> None:
    upload = st.session_state.get("restore.file")
    if upload is None:
        return
    if key is None:  # the store holds the key: without it no file can be checked, so none is read
        st.session_state[FLASH_KEY] = ("error", lessons.sentence("quiz_report", "restore_needs_store"))
        return
    try:
        restored = progress_file.restore(
            state.snapshot(), upload.getvalue(), bank=bank, schema=load_schema(), key=key
        )
    except progress_file.RefusedFile as err:
        st.session_state[FLASH_KEY] = (
            "error",
            lessons.sentence("quiz_report", "restore_refused", reason=err),
        )
        return
    state.restore(restored.state)
    st.session_state[FLASH_KEY] = (
        "success" if restored.verdict is Verdict.INTACT else "warning",
        restored.summary(),
    )
    # The whole app, not only this page: the sidebar's saved indicator must show whether it is stored.
    st.rerun()


def _progress_file(snapshot: dict[str, Any], key: str | None) -> bytes:
    """The progress file as of the click. Streamlit calls it on a thread of its own, outside the session,
    so it is handed the learner's work rather than reading it."""
    return progress_file.export_progress(snapshot, exported_at=utc_timestamp(datetime.now(UTC)), key=key)


def _hand_in() -> None:
    if not unanswered_quiz(bank, state.answers()):  # the disabled button is not the only guard
        state.hand_in(utc_timestamp(datetime.now(UTC)))
        # The whole app, not only this page: the frame around it is drawn again for a handed-in lab.
        st.rerun()


def draw() -> None:
    """The page's body: the quiz, the report, downloads, restore, hand-in and the instructors' check."""
    key = signing_key()
    locked = state.read_only()

    prose(heading("Quiz and report", TITLE), lessons.text("quiz_report", "intro"), heading("Quiz"))
    marked_questions(*quiz_ids(bank), page_reads_it=True)  # the report below counts them

    report = build_report(
        bank, state.snapshot(), layer=layer_figures(), budget=budget_figures(), run_a_brief=brief_sentence()
    )
    st.header("Your report")
    st.caption(report.handed_in_text)
    with st.container(horizontal=True):  # a flex row: four elements fewer than columns
        st.metric("Marked checks", report.checks_score.label)
        st.metric("Quiz", report.quiz_score.label)
        st.metric("Overall", report.overall_score.label)
        st.metric(
            "Predictions held",
            report.predictions_score.label,
            help=lessons.sentence("quiz_report", "predictions_held_help"),
        )
    # A static table: every row shown and every cell wrapped, never a scrolled or truncated grid.
    st.table(arrow_rows(report.marked_rows()), hide_index=True)
    for line in report.wrong():
        if line.page:
            st.page_link(
                page_for(line.page),
                label=lessons.sentence(
                    "quiz_report", "back_to", page_title=title_of(line.page), question=line.label
                ),
                icon=":material/undo:",
            )
    st.subheader("Your predictions")
    st.caption(lessons.sentence("quiz_report", "predictions_caption"))
    st.table(arrow_rows(report.prediction_rows()), hide_index=True)
    not_done = lessons.sentence("quiz_report", "not_done")
    prose(
        heading("The layer you built", SUBHEADER),
        report.layer.sentence() if report.layer else not_done,
        heading("The memory budget you left", SUBHEADER),
        report.budget.sentence() if report.budget else not_done,
        heading("Run A: your first experiment and why", SUBHEADER),
    )
    st.caption(report.run_a_brief)
    # Everything below comes from what the learner typed, so it is shown as plain text only.
    st.text(report.first_experiment or not_done)
    st.text(report.reasoning or not_done)
    st.subheader("Run B: what you would measure")
    st.text(report.run_b_measure or not_done)
    scaling_plan = heading("Scaling out: your plan", SUBHEADER)
    if report.scaling is None:
        prose(scaling_plan, lessons.sentence("quiz_report", "scaling_not_started"))
    else:
        prose(
            scaling_plan,
            scaling_progress(report.scaling),
            "\n".join(
                f"- {SYNTHESIS_HEADINGS[name]}: {label}" for name, label in report.scaling.choices.items()
            ),
        )
        st.text(report.scaling.rationale or not_done)
    prose(
        heading("Not done yet", SUBHEADER),
        "\n".join(f"- {title}" for title in report.not_done)
        or lessons.sentence("quiz_report", "every_part_complete"),
    )

    st.header("Keep your work")
    # Downloads stay available after hand-in: that is when the final report is worth keeping. Both files
    # are written when clicked, not on every run of the page.
    left, right = st.columns(2)
    left.download_button(
        lessons.sentence("quiz_report", "download_report"),
        functools.partial(render_markdown, report),
        file_name=progress_file.REPORT_FILE_NAME,
        mime="text/markdown",
        on_click="ignore",
        icon=":material/description:",
        key="download.report",
    )
    right.download_button(
        lessons.sentence("quiz_report", "download_progress"),
        functools.partial(_progress_file, state.snapshot(), key),
        file_name=progress_file.PROGRESS_FILE_NAME,
        mime="application/json",
        on_click="ignore",
        icon=":material/save:",
        key="download.progress",
    )
    st.caption(
        lessons.sentence("quiz_report", "signed") if key else lessons.sentence("quiz_report", "unsigned")
    )

    st.subheader("Restore progress")
    st.file_uploader(
        lessons.sentence("quiz_report", "restore_file"), type="json", key="restore.file", disabled=locked
    )
    st.button(
        lessons.sentence("quiz_report", "restore_button"),
        on_click=_restore,
        args=(key,),
        key="restore.go",
        disabled=locked or st.session_state.get("restore.file") is None,
        help=lessons.sentence("quiz_report", "restore_help"),
    )
    if flash := st.session_state.pop(FLASH_KEY, None):
        kind, message = flash
        {"error": st.error, "warning": st.warning}.get(kind, st.success)(message)

    missing = unanswered_quiz(bank, state.answers())
    hand_in = heading("Hand in")
    if locked:
        prose(hand_in)
        st.success(
            lessons.sentence("quiz_report", "read_only_now", handed_in=report.handed_in_text),
            icon=":material/task_alt:",
        )
    else:
        prose(hand_in, lessons.text("quiz_report", "hand_in"))
        if missing:
            st.warning(
                lessons.sentence("quiz_report", "answer_quiz_first", questions="; ".join(missing)),
                icon=":material/pending:",
            )
        confirmed = st.checkbox(lessons.sentence("quiz_report", "hand_in_confirm"), key="handin.confirm")
        st.button(
            lessons.sentence("quiz_report", "hand_in_button"),
            type="primary",
            on_click=_hand_in,
            disabled=bool(missing) or not confirmed,
            key="handin.go",
        )

    st.header("For instructors: check a progress file")
    if key is None:
        st.info(lessons.sentence("quiz_report", "no_signing_key"), icon=":material/key_off:")
    else:
        # Not disabled after hand-in: checking a file changes nothing in this session.
        submitted = st.file_uploader("A learner's progress file", type="json", key="verify.file")
        if submitted is not None:
            found = progress_file.inspect_file(submitted.getvalue(), bank=bank, schema=load_schema(), key=key)
            if found.problem or found.verdict is None:
                st.error(found.problem or lessons.sentence("quiz_report", "not_checkable"))
            else:
                show = {Verdict.INTACT: st.success, Verdict.EDITED: st.error, Verdict.UNSIGNED: st.warning}[
                    found.verdict
                ]
                show(f"**{found.verdict.value.capitalize()}.** {found.summary}")
    next_link("pages/quiz_report.py")


lesson_page(draw)
