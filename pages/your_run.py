"""Your run: read a training log (an example or your own) and get each kind's verdict and evidence.

Everything read from a learner's file (column names, error messages that quote them) is shown as
plain text, never as Markdown. Nothing here is kept outside the learner's own session.
"""

import functools

import streamlit as st

from charts.telemetry import PANELS_PER_ROW
from charts.your_run import (
    panel_dataset_names,
    panel_description,
    your_run_datasets,
    your_run_panel,
    your_run_shape,
)
from core import lessons
from core.diagnose.columns import ROLES, columns_signature, guess_mapping
from core.diagnose.detectors import CHANCE_TOLERANCE, LIKELY, POSSIBLE, Finding, RunContext
from core.diagnose.diagnosis import HEALTHY
from core.diagnose.examples import example, example_bytes, load_examples
from core.diagnose.formats import MAX_BYTES, Table, read_log
from core.diagnose.reading import Reading, Source, example_reading, example_table, reading
from core.gpus import gpu, gpu_names, peak_tflops
from ui import state
from ui.charts import draw as draw_chart
from ui.charts import panel_slots, shared_datasets
from ui.frame import lesson_page, lesson_section
from ui.marked import marked_questions
from ui.nav import next_link, page_for
from ui.prose import SUBHEADER, TITLE, heading, literal, prose

UPLOAD = "upload"
NOT_GIVEN = "(not given)"
UNMAPPED = "(none)"
MAPPING_OPEN = "your_run.mapping_open"  # whether "Which column is which" is open
UPLOAD_READ = "your_run.upload_read"  # (file id, table or refusal) of the upload last read
UPLOAD_READING = "your_run.upload_reading"  # ((file id, mapping, context), reading) last worked out
VERDICT_ICONS = {LIKELY: ":material/error:", POSSIBLE: ":material/help:"}


def _source_label(file: str) -> str:
    if file == UPLOAD:
        return lessons.sentence("your_run", "own_log")
    found = next(e for e in load_examples() if e.file == file)
    return lessons.sentence("your_run", "example_log", title=found.title)


def pick_source() -> Source | None:
    """The example or uploaded file to read, or None while the learner has not uploaded anything yet."""
    options = [e.file for e in load_examples()] + [UPLOAD]
    choice = st.radio("Which log?", options, format_func=_source_label, key="your_run.source")
    if choice != UPLOAD:
        found = next(e for e in load_examples() if e.file == choice)
        st.caption(lessons.sentence("your_run", "how_made", how=found.how, measured=found.measured))
        return Source(name=found.file, data=example_bytes(found.file), example=found)
    uploaded = st.file_uploader(
        "Your training log (CSV, JSON Lines, W&B CSV export, trainer_state.json or a TensorBoard "
        f"event file; up to {MAX_BYTES / 1e6:g} MB)",
        key="your_run.file",
        max_upload_size=10,
    )
    if uploaded is None:
        return None
    return Source(name=uploaded.name, data=uploaded.getvalue(), example=None, upload_id=uploaded.file_id)


def uploaded_table(source: Source) -> Table:
    """The upload read once: its table (or the sentence refusing it) is kept in this session under the
    file's id, so a rerun (a mapping box, a number) reads nothing again. One upload is kept at a time."""
    kept = st.session_state.get(UPLOAD_READ)
    if kept is None or kept[0] != source.upload_id:
        try:
            kept = (source.upload_id, read_log(source.data, source.name))
        except ValueError as problem:
            kept = (source.upload_id, str(problem))
        st.session_state[UPLOAD_READ] = kept
        st.session_state.pop(UPLOAD_READING, None)
    if isinstance(kept[1], str):
        raise ValueError(kept[1])
    return kept[1]


def uploaded_reading(
    source: Source, table: Table, mapping: dict[str, str | None], context: RunContext
) -> Reading:
    """The upload's reading for this mapping and context, kept in this session until either changes."""
    key = (source.upload_id, tuple(sorted(mapping.items())), context)
    kept = st.session_state.get(UPLOAD_READING)
    if kept is None or kept[0] != key:
        kept = (key, reading(table, mapping, context))
        st.session_state[UPLOAD_READING] = kept
    return kept[1]


def _whole(label: str, key: str, default: int, help: str | None = None) -> int | None:
    value = st.number_input(label, min_value=0, value=default, step=1, key=key, help=help)
    return int(value) or None


def ask_context(source: Source) -> RunContext:
    """What the learner knows beside the log (class count, vocabulary, GPU, model size), as a RunContext."""
    scope = source.example.file if source.example else UPLOAD
    default_classes = source.example.classes if source.example else 0
    left, middle, right = st.columns(3)
    with left:
        classes = _whole(
            "Number of classes", f"your_run.classes.{scope}", default_classes, "0 if not a classifier"
        )
        vocab = _whole("Vocabulary size (0: not a language model)", f"your_run.vocab.{scope}", 0)
    with middle:
        card = st.selectbox(
            "GPU it ran on",
            [NOT_GIVEN, *gpu_names()],
            key=f"your_run.gpu.{scope}",
        )
    with right:
        params = _whole("Parameters, for MFU (0: not given)", f"your_run.params.{scope}", 0)
    chosen = None if card == NOT_GIVEN else gpu(card)
    return RunContext(
        classes=classes,
        vocab=vocab,
        device_gb=chosen.memory_gb if chosen else None,
        params=float(params) if params else None,
        peak_tflops=peak_tflops(chosen, "bf16") if chosen else None,
    )


def _kept(key: str) -> str:
    return f"{key}.kept"


def _keep(key: str) -> None:
    # Streamlit forgets a select box's value on a run that does not draw it (the expander closed).
    if key in st.session_state:  # a browser may still send a box the page no longer draws
        st.session_state[_kept(key)] = st.session_state[key]


def ask_mapping(
    columns: tuple[str, ...], guessed: dict[str, str | None], scope: str, *, shown: bool
) -> dict[str, str | None]:
    """One select box per quantity, preset to the column recognised by name; the learner can change any.
    With `shown` false the boxes are not drawn and the mapping is the learner's last choices."""
    options = [UNMAPPED, *columns]
    mapping: dict[str, str | None] = {}
    boxes = st.columns(3) if shown else []
    for index, role in enumerate(ROLES):
        key = f"your_run.map.{scope}.{role.id}"
        choice = st.session_state.get(_kept(key), guessed.get(role.id) or UNMAPPED)
        if shown:
            with boxes[index % 3]:
                choice = st.selectbox(
                    role.label[0].upper() + role.label[1:],
                    options,
                    index=options.index(choice),
                    key=key,
                    on_change=_keep,
                    args=(key,),
                )
        mapping[role.id] = None if choice == UNMAPPED else choice
    return mapping


def finding_card(finding: Finding) -> None:
    """One failure kind: verdict, summary, evidence (plain text), what is missing, the next measurement."""
    with st.container(border=True):
        icon = VERDICT_ICONS.get(finding.verdict, ":material/check_circle:")
        prose(
            heading(f"{finding.kind.capitalize()}: {finding.verdict}", SUBHEADER), f"{icon} {finding.summary}"
        )
        # Plain text, as a log's own column names may appear in it; one element for all the lines.
        if finding.evidence:
            st.text("\n".join(f"• {line}" for line in finding.evidence))
        if finding.missing:
            st.caption(
                "\n\n".join(
                    lessons.sentence("your_run", "would_decide", what=line) for line in finding.missing
                )
            )
        if finding.verdict in (LIKELY, POSSIBLE):
            st.markdown(lessons.sentence("your_run", "measure_next", measurement=finding.next_step))
            st.page_link(
                page_for(finding.page),
                label=lessons.sentence("your_run", "learn_it", page_title=finding.page_title),
                icon=":material/arrow_forward:",
            )


def show_run(read: Reading, *, title: str, marked: bool) -> None:
    """Draw the log's panels with the evidence marked, or bare (before the question is answered). The
    caller draws the bold `title` above them: the page's body draws it in one element with its headings.
    The layout is cached; a shipped example's rows are kept per process, an upload's are sent fresh, so
    no learner's data stays in a shared cache."""
    shape = your_run_shape(read.run, read.diagnosis, marked=marked)
    build = functools.partial(your_run_datasets, read.run, read.diagnosis, marked=marked)
    rows = shared_datasets(read, marked, build) if read.shared else build()
    names = panel_dataset_names(shape)
    for index, slot in enumerate(panel_slots(len(names), PANELS_PER_ROW)):
        with slot:
            draw_chart(
                ("your_run", shape, index),
                functools.partial(your_run_panel, shape, index),
                datasets={name: rows[name] for name in names[index]},
                description=panel_description(read.run, read.diagnosis, shape, index, title, marked=marked),
            )


QUESTION_ID = "y1"
QUESTION_EXAMPLE = "leak.tfevents"


def draw() -> None:
    """The page's body: the question on one example log, then the learner's chosen log read and diagnosed."""
    quiz = example(QUESTION_EXAMPLE)
    prose(
        heading("Your run", TITLE),
        lessons.text("your_run", "intro"),
        heading(lessons.sentence("your_run", "classify_heading")),
        f"**{quiz.title}**",
    )
    quiz_table = example_table(quiz.file)
    quiz_reading = example_reading(
        quiz.file, guess_mapping(quiz_table.columns), RunContext(classes=quiz.classes)
    )
    show_run(quiz_reading, title=quiz.title, marked=False)
    marked_questions(QUESTION_ID, page_reads_it=True)  # the log below waits for the answer

    st.header(lessons.sentence("your_run", "read_heading"))
    # The log's controls rerun only the reading below them, not the example above.
    lesson_section(read_a_log)
    next_link("pages/your_run.py")


def read_a_log() -> None:
    """Pick a log and read it: what it holds, which column is which, the diagnosis, charts and findings."""
    answered = QUESTION_ID in state.answers()
    source = pick_source()
    if source is None:
        st.info(lessons.sentence("your_run", "upload_first"))
    elif source.example is not None and source.example.file == QUESTION_EXAMPLE and not answered:
        st.info(lessons.sentence("your_run", "answer_first"))
    else:
        try:
            table = example_table(source.example.file) if source.example else uploaded_table(source)
            context = ask_context(source)
        except ValueError as problem:
            st.error(literal(str(problem)))
        else:
            st.caption(
                lessons.sentence(
                    "your_run",
                    "read_as",
                    log_format=table.format,
                    rows=len(table.rows),
                    columns=len(table.columns),
                )
            )
            if table.ignored:
                st.text(
                    lessons.sentence("your_run", "text_columns_left_out", columns=", ".join(table.ignored))
                )
            # Built only while open: for a shipped example the names already say which column is which.
            box = st.expander(
                "Which column is which", expanded=source.example is None, key=MAPPING_OPEN, on_change="rerun"
            )
            with box:
                if box.open:
                    st.caption(lessons.sentence("your_run", "mapping_help"))
                mapping = ask_mapping(
                    table.columns,
                    guess_mapping(table.columns),
                    columns_signature(table.columns),
                    shown=bool(box.open),
                )
            try:
                read = (
                    example_reading(source.example.file, mapping, context)
                    if source.example
                    else uploaded_reading(source, table, mapping, context)
                )
            except ValueError as problem:
                st.error(literal(str(problem)))
            else:
                diagnosis = read.diagnosis
                (st.success if diagnosis.primary == HEALTHY else st.warning)(diagnosis.summary)
                title = source.example.title if source.example else "Your log"
                st.markdown(f"**{title}**")
                show_run(read, title=title, marked=True)
                st.caption(lessons.sentence("your_run", "chart_key", chance_tolerance=CHANCE_TOLERANCE))
                left, right = st.columns(2)
                for index, finding in enumerate(diagnosis.findings):
                    with left if index % 2 == 0 else right:
                        finding_card(finding)


lesson_page(draw)
