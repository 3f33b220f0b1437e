"""Your OOM: paste PyTorch's out-of-memory error, name the run, and read where it died and what fits.

What the learner pastes is shown only as plain text or escaped (`literal`), never as Markdown, and
kept in this session only. Reading the message, placing the failure, the block's arithmetic and the
changes are all `core` (core.oom, core.oom_verdict, core.oom_measurement).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import streamlit as st

from charts.your_oom import steps_chart
from core import lessons
from core.gpus import gpu, gpu_names
from core.memory.first_oom import PHASE_WORDS, FirstOom, first_oom, step_peaks
from core.memory.phases import step_phases
from core.memory.reference import cuda_context_bytes, run_a_measurements
from core.memory.settings import Attention, Optimizer, OptimizerImpl, Recompute, convention_label
from core.memory.setup import StepSetup
from core.memory.verdict import Capacity
from core.model_config import load_config_text
from core.models import model_names, preset
from core.oom import FIELD_WORDS, MAX_MESSAGE_CHARS, OomMessage, parse_oom_message
from core.oom_measurement import MAX_PASTE_CHARS, compare, parse_peaks, snippet
from core.oom_verdict import Change, OomVerdict, capacity_of, card_for, changes, size_words, verdict
from core.run_a.scenario import load_content
from ui import state
from ui.charts import draw as draw_chart
from ui.frame import lesson_page
from ui.prose import SUBHEADER, TITLE, heading, literal, prose
from ui.tables import table_with_notes
from ui.training_pickers import checked_training, training_box

KEY = "your_oom"  # the page's session keys, and its settings section (how the run trains)
MESSAGE, CONFIG, MEASURED = f"{KEY}.message", f"{KEY}.config", f"{KEY}.measured"
MODEL, BATCH, SEQ = f"{KEY}.model", f"{KEY}.batch", f"{KEY}.seq"
PRECISION, OPTIMIZER, IMPL = f"{KEY}.precision", f"{KEY}.optimizer", f"{KEY}.impl"
ATTENTION, RECOMPUTE, GPU, CAP = f"{KEY}.attention", f"{KEY}.recompute", f"{KEY}.gpu", f"{KEY}.cap_gib"
CHANGE, APPLIED, BEFORE = f"{KEY}.change", f"{KEY}.applied", f"{KEY}.before"
RUN_A, OWN_CONFIG = "Run A (GPT-2 layout, 3072 wide, 16 blocks)", "My config.json"
PRECISIONS = ("fp32", "amp", "bf16")
MAX_CAP_GIB = 100_000.0


def _defaults() -> dict[str, Any]:
    """Run A as briefed: a learner who pastes Run A's message only needs the cap the message gives."""
    run_a = load_content().scenario.setup
    return {
        MODEL: RUN_A,
        BATCH: run_a.batch,
        SEQ: run_a.seq_len,
        PRECISION: run_a.precision,
        OPTIMIZER: run_a.optimizer,
        IMPL: run_a.optimizer_impl,
        ATTENTION: run_a.attention,
        RECOMPUTE: run_a.recompute,
        GPU: "H200",
        CAP: 0.0,
    }


def _prefill() -> None:
    """Take the card and the cap from a newly pasted message; leave them alone if it cannot be read."""
    try:
        message = parse_oom_message(st.session_state.get(MESSAGE, ""))
    except ValueError:
        return
    card = card_for(message)
    if card is not None:
        st.session_state[GPU] = card.name
    st.session_state[CAP] = round(message.allowed_bytes / 2**30, 2) if message.allowed_bytes else 0.0
    st.session_state.pop(APPLIED, None)  # a new message: the boxes now name its run
    st.session_state.pop(BEFORE, None)


def _use_run_a() -> None:
    row = next(r for r in run_a_measurements() if r.outcome == "step 1 backward" and r.optim == "adam")
    st.session_state[MESSAGE] = row.message
    _prefill()


# The run's boxes and the StepSetup field each one sets.
SETUP_FIELDS = {
    BATCH: "batch",
    SEQ: "seq_len",
    PRECISION: "precision",
    OPTIMIZER: "optimizer",
    IMPL: "optimizer_impl",
    ATTENTION: "attention",
    RECOMPUTE: "recompute",
}


def _apply(options: dict[str, Change]) -> None:
    """Set the run's boxes to the chosen change, remembering the run the message came from."""
    change = options.get(st.session_state.get(CHANGE, ""))
    if change is None:
        return
    if APPLIED not in st.session_state:  # the first change: what the boxes held is the message's run
        st.session_state[BEFORE] = {key: st.session_state[key] for key in (*SETUP_FIELDS, GPU, CAP)}
    st.session_state.update({key: getattr(change.setup, name) for key, name in SETUP_FIELDS.items()})
    if change.card is not None:
        st.session_state.update({GPU: change.card, CAP: 0.0})
    st.session_state[APPLIED] = change.name


def _undo() -> None:
    """Put the boxes back to the run the message came from."""
    st.session_state.update(st.session_state.pop(BEFORE, {}))
    st.session_state.pop(APPLIED, None)


def _fate(failure: FirstOom | None) -> str:
    if failure is None:
        return lessons.sentence("your_oom", "change_fits")
    return lessons.sentence("your_oom", "change_fails", where=failure.where)


def read_message() -> tuple[str, OomMessage] | None:
    """The pasted message, read; None (with a sentence) while there is none or it cannot be read."""
    st.button(lessons.sentence("your_oom", "example"), on_click=_use_run_a, disabled=state.read_only())
    text = st.text_area(
        "Your out-of-memory message, or the whole traceback",
        key=MESSAGE,
        max_chars=MAX_MESSAGE_CHARS,
        on_change=_prefill,
        height=150,
        disabled=state.read_only(),
    )
    if not text.strip():
        st.info(lessons.sentence("your_oom", "paste_first"))
        return None
    try:
        message = parse_oom_message(text)
    except ValueError as err:
        st.error(literal(str(err)))
        return None
    st.caption(
        lessons.sentence(
            "your_oom",
            "read",
            tried=_size(message.tried_bytes),
            line=_size(message.limit_bytes),
            allocated=_size(message.allocated_bytes),
            unallocated=_size(message.reserved_unallocated_bytes),
        )
    )
    if message.unread:
        st.warning(
            lessons.sentence("your_oom", "unread", what=", ".join(FIELD_WORDS[n] for n in message.unread))
        )
    return text, message


def _size(value: float | None) -> str:
    return "not said" if value is None else size_words(value)


def name_the_run() -> tuple[StepSetup, float] | None:
    """The run as the learner names it, and the cap in GiB (0: none); None with a sentence if refused."""
    for key, value in _defaults().items():
        st.session_state.setdefault(key, value)
    off = state.read_only()
    left, middle, right = st.columns(3)
    with left:
        choice = st.selectbox("Model", [RUN_A, *model_names()[:-1], OWN_CONFIG], key=MODEL, disabled=off)
        batch = st.number_input("Micro-batch", min_value=1, max_value=4096, step=1, key=BATCH, disabled=off)
        seq = st.number_input(
            "Sequence length", min_value=1, max_value=1 << 20, step=1, key=SEQ, disabled=off
        )
        precision = st.selectbox(
            "Precision", PRECISIONS, format_func=convention_label, key=PRECISION, disabled=off
        )
    with middle:
        optimizer = st.selectbox(
            "Optimizer", Optimizer.ids(), format_func=Optimizer.label_of, key=OPTIMIZER, disabled=off
        )
        impl = st.selectbox(
            "Implementation", OptimizerImpl.ids(), format_func=OptimizerImpl.label_of, key=IMPL, disabled=off
        )
        attention = st.selectbox(
            "Attention", Attention.ids(), format_func=Attention.label_of, key=ATTENTION, disabled=off
        )
    with right:
        recompute = st.selectbox(
            "Recomputation", Recompute.ids(), format_func=Recompute.label_of, key=RECOMPUTE, disabled=off
        )
        st.selectbox("GPU", gpu_names(), key=GPU, disabled=off)
        cap = st.number_input(
            "Memory cap in GiB (0: none)",
            min_value=0.0,
            max_value=MAX_CAP_GIB,
            step=1.0,
            key=CAP,
            disabled=off,
        )
    training_box(KEY, lessons.sentence("your_oom", "training_box"), disabled=off)
    training = checked_training(KEY)
    if training is None:
        return None
    try:
        if choice == OWN_CONFIG:
            text = st.text_area("Your config.json", key=CONFIG, max_chars=200_000, disabled=off)
            model = load_config_text(text, name="your config.json")
        else:
            model = load_content().scenario.setup.model if choice == RUN_A else preset(choice)
        setup = StepSetup(
            model=model,
            batch=int(batch),
            seq_len=int(seq),
            precision=precision,
            attention=attention,
            recompute=recompute,
            optimizer=optimizer,
            optimizer_impl=impl,
            training=training,
        )
    except ValueError as err:
        st.error(literal(lessons.sentence("your_oom", "config_refused", reason=str(err))))
        return None
    try:
        step_phases(setup)  # what the phase model does not count yet (QLoRA under autocast, say) is refused
    except ValueError as err:
        st.error(literal(lessons.sentence("your_oom", "run_not_counted", reason=str(err))))
        return None
    return setup, float(cap)


def show_verdict(found: OomVerdict) -> None:
    """Where it died and whether the estimate agrees, the memory then, and the block it tried."""
    message, estimate, line = found.message, found.estimate, size_words(found.capacity.total_bytes)
    if found.where is None:
        died = lessons.sentence("your_oom", "died_unknown")
    elif found.evidence == "block":
        died = lessons.sentence(
            "your_oom",
            "died_block",
            where=found.where,
            tried=_size(message.tried_bytes),
            block=found.candidates[0].name,
        )
    else:
        key = "died_traceback" if found.evidence == "traceback" else "died_estimate"
        died = lessons.sentence("your_oom", key, where=found.where)
    if estimate is None:
        peak = max(step_peaks(found.setup, found.capacity).values())
        agree = lessons.sentence("your_oom", "fits", peak=size_words(peak), line=line)
    else:
        agree = lessons.sentence(
            "your_oom",
            "agrees" if found.agrees else "disagrees",
            where=estimate.where,
            needed=size_words(estimate.needed_bytes),
            line=line,
        )
    why = ""
    if found.over_the_line and message.allowed_bytes is None:
        why = lessons.sentence(
            "your_oom",
            "over_card",
            free=_size(message.free_bytes),
            tried=_size(message.tried_bytes),
            reserved=_size(message.reserved_bytes),
        )
    elif found.over_the_line and found.reserved_after_bytes is not None:
        why = lessons.sentence(
            "your_oom",
            "over_line",
            allocated=_size(message.allocated_bytes),
            unallocated=_size(message.reserved_unallocated_bytes),
            reserved=_size(message.reserved_bytes),
            tried=_size(message.tried_bytes),
            after=f"{found.reserved_after_bytes / 2**30:,.3f} GiB",
            line=_size(message.limit_bytes),
        )
    pieces = ""
    if message.fragmentation_may_decide is not None:
        pieces = lessons.sentence(
            "your_oom",
            "fragmented" if message.fragmentation_may_decide else "not_fragmented",
            unallocated=_size(message.reserved_unallocated_bytes),
            tried=_size(message.tried_bytes),
        )
    prose(heading("Where it died", SUBHEADER), died, agree, why, pieces)
    st.table(
        [
            {
                "Term": row.term,
                "Estimate (GiB)": "" if row.estimate_bytes is None else f"{row.estimate_bytes / 2**30:.2f}",
                "The message (GiB)": "" if row.message_bytes is None else f"{row.message_bytes / 2**30:.2f}",
            }
            for row in found.rows
        ],
        hide_index=True,
        alt="The memory at the moment the run died, term by term: the estimate beside the message.",
    )
    st.caption(lessons.sentence("your_oom", "terms_caption"))
    peaks = step_peaks(found.setup, found.capacity)
    where = estimate.where if estimate else lessons.sentence("your_oom", "no_failure")
    draw_chart(
        (KEY, "steps", found.capacity.total_bytes, *sorted(peaks.items())),
        lambda: steps_chart(
            peaks, line_bytes=found.capacity.total_bytes, title="Steps 1 and 2 against the line"
        ),
        description=lessons.sentence("your_oom", "chart_description", line=line, where=where),
    )
    lines = [
        lessons.sentence(
            "your_oom",
            "block_line",
            name=b.name[0].upper() + b.name[1:],
            arithmetic=b.arithmetic,
            tensor=size_words(b.tensor_bytes),
            segment=size_words(b.segment_bytes),
        )
        for b in found.candidates
    ] or [lessons.sentence("your_oom", "block_none", tried=_size(message.tried_bytes))]
    prose(
        heading(f"What the {_size(message.tried_bytes)} block most likely is", SUBHEADER),
        "\n".join(f"- {line}" for line in lines),
        lessons.sentence("your_oom", "block_rounding"),
    )


def draw_steps(setup: StepSetup, capacity: Capacity, failure: FirstOom | None, *, title: str) -> None:
    """The chart of steps 1 and 2, phase by phase, against the line `capacity` draws."""
    peaks = step_peaks(setup, capacity)
    where = failure.where if failure else lessons.sentence("your_oom", "no_failure")
    line = size_words(capacity.total_bytes)
    draw_chart(
        (KEY, "steps", title, capacity.total_bytes, *sorted(peaks.items())),
        lambda: steps_chart(peaks, line_bytes=capacity.total_bytes, title=title),
        description=lessons.sentence("your_oom", "chart_description", line=line, where=where),
    )


def show_changes(setup: StepSetup, found: OomVerdict) -> None:
    """The smallest changes, ranked, each with its new first failure, and one to apply."""
    ranked = changes(setup, found.capacity, context_bytes=cuda_context_bytes())
    prose(
        heading("The smallest changes that make it fit", SUBHEADER),
        lessons.sentence("your_oom", "changes_intro"),
    )
    table_with_notes(
        [{"Change": c.name, "Then": _fate(c.failure), "How": literal(c.how)} for c in ranked],
        notes="How",
        alt="Each change alone and where the changed run first fails, those that make it fit first.",
    )
    options = {c.name: c for c in ranked}
    left, right = st.columns([3, 1], vertical_alignment="bottom")
    left.selectbox("Change to apply", list(options), key=CHANGE, disabled=state.read_only())
    right.button("Apply", on_click=_apply, args=(options,), disabled=state.read_only())


def bring_your_measurement(setup: StepSetup) -> None:
    """The snippet to copy, and its output pasted back, phase by phase against the estimate."""
    prose(lessons.text("your_oom", "measure"))
    st.code(snippet(), language="python")
    pasted = st.text_area(
        "What the snippet printed",
        key=MEASURED,
        max_chars=MAX_PASTE_CHARS,
        height=80,
        disabled=state.read_only(),
    )
    if not pasted.strip():
        return
    try:
        checks = compare(parse_peaks(pasted), setup)
    except ValueError as err:
        st.error(literal(lessons.sentence("your_oom", "measure_refused", reason=str(err))))
        return
    st.table(
        [
            {
                "Step": c.step,
                "Phase": PHASE_WORDS[c.phase],
                "Measured (GiB)": f"{c.measured_bytes / 2**30:.2f}",
                "Estimate (GiB)": f"{c.estimate_bytes / 2**30:.2f}",
                "Off by": "" if c.off_by is None else f"{c.off_by:+.0%}",
            }
            for c in checks
        ],
        hide_index=True,
        alt="Each phase of your measured steps beside the estimate.",
    )
    st.caption(lessons.sentence("your_oom", "measure_caption"))


def draw() -> None:
    """The page: the message, the run, the verdict, the changes, a measurement of the learner's own."""
    prose(heading("Your OOM", TITLE), lessons.text("your_oom", "intro"))
    read = read_message()
    prose(heading("Name the run", SUBHEADER))
    named = name_the_run()
    if read is not None and named is not None:
        show_reading(*read, *named)
    prose(lessons.text("your_oom", "limits"))


def _capacity(message: OomMessage, card: str, cap_gib: float) -> Capacity:
    return capacity_of(message, gpu(card), cap_gib, context_bytes=cuda_context_bytes())


def show_reading(text: str, message: OomMessage, setup: StepSetup, cap_gib: float) -> None:
    """Everything the message and the named run say together; after a change, the message is read
    against the run it came from and the change is shown as the experiment it is."""
    before = st.session_state.get(BEFORE) if APPLIED in st.session_state else None
    try:
        capacity = _capacity(message, st.session_state[GPU], cap_gib)
        if before is None:
            message_run, message_capacity = setup, capacity
        else:
            message_run = replace(setup, **{name: before[key] for key, name in SETUP_FIELDS.items()})
            message_capacity = _capacity(message, before[GPU], before[CAP])
    except ValueError as err:
        st.error(literal(str(err)))
        return
    found = verdict(text, message, message_run, message_capacity, context_bytes=cuda_context_bytes())
    show_verdict(found)
    show_changes(message_run, found)
    if before is not None:
        changed = first_oom(setup, capacity)
        st.success(
            lessons.sentence("your_oom", "applied", name=st.session_state[APPLIED], fate=_fate(changed))
        )
        draw_steps(setup, capacity, changed, title="The run with your change against the line")
        st.button(lessons.sentence("your_oom", "undo"), on_click=_undo, disabled=state.read_only())
    bring_your_measurement(setup)


lesson_page(draw)
