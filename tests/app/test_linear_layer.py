"""The Linear layer cost page: lesson figures at defaults, live tiles and chart, persistence."""

import json

import pytest
from streamlit import dataframe_util
from streamlit.testing.v1 import AppTest

from core import lessons
from store.ids import new_learner_id
from tests.app.conftest import HOME, answer, headings, open_box, open_page, predict, reveal_roofline
from tests.app.test_learner_record import _session_of
from ui.links import share_open_key

PAGE = "pages/linear_layer.py"


def _open() -> AppTest:
    """The page with its three placements locked, so the roofline shows."""
    return reveal_roofline(open_page(PAGE))


def _tiles(at):
    return {m.label: m.value for m in at.main.metric}


def _chart_rows(at):
    """The chart's datasets in layer order: roof corners, ridge, points."""
    chart = at.get("vega_lite_chart")[0]
    frames = {
        d.name: dataframe_util.convert_arrow_bytes_to_pandas_df(d.data.data) for d in chart.proto.datasets
    }
    return [
        frames[layer["data"]["name"]].to_dict("records") for layer in json.loads(chart.proto.spec)["layer"]
    ]


def test_defaults_agree_with_the_lesson():
    at = _open()
    assert not at.exception
    assert _tiles(at) == {
        "MACs (forward)": "536,870,912",
        "FLOPs (forward)": "1.07 GFLOPs",
        "Parameters": "16,781,312",
        "Weight memory": "67.1 MB",  # 16,781,312 × 4 bytes, FP32 as chosen
    }
    prose = " ".join(m.value for m in at.markdown)
    # 4096² fp32 matmul: 2 × 4096³ = 137 GFLOP on two 67 MB inputs, 1,024 FLOPs per byte read.
    assert all(figure in prose for figure in ("137 GFLOP", "134 MB", "1,024"))
    assert "0.625" in prose  # GELU: 5 FLOPs per element over 4 bytes read and 4 written
    assert "**403 MB**" in prose and "**134 MB** (33%" in prose  # three kernels vs one
    table = at.table[0].value
    assert list(table["Operation"]) == ["Your linear layer", "4096×4096 matmul", "GELU", "LayerNorm"]
    assert list(table["Bound by"]) == ["compute-bound", "compute-bound", "memory-bound", "memory-bound"]
    roof, [ridge], points = _chart_rows(at)
    assert ridge["Ridge FLOP/byte"] == pytest.approx(19.5 / 2.039)
    # GELU: 5 FLOPs per element over 4 bytes read and 4 written; the matmul 1,024 FLOPs per byte read, 683
    # per byte read and written (2 × 4096³ over three 67 MB matrices).
    assert list(table["FLOP per byte"])[1:3] == ["683", "0.625"]
    assert [float(shown.replace(",", "")) for shown in table["FLOP per byte"]] == pytest.approx(
        [p["FLOP/byte"] for p in points], rel=5e-3
    )


def test_moving_the_batch_changes_the_tiles_and_the_chart():
    at = _open()
    before = _chart_rows(at)[2][0]["FLOP/byte"]
    at.slider(key="linear.batch").set_value(64).run()
    assert _tiles(at)["MACs (forward)"] == "1,073,741,824"  # 64 × 4096 × 4096
    assert _tiles(at)["Parameters"] == "16,781,312"  # the batch never changes the weights
    assert _chart_rows(at)[2][0]["FLOP/byte"] > before
    assert "**64**" in at.info[0].value


def test_gpu_and_dtype_move_the_roof():
    at = _open()
    at.selectbox(key="linear.gpu").set_value("H100 SXM").run()
    at.selectbox(key="linear.dtype").set_value("bf16").run()
    roof, [ridge], _ = _chart_rows(at)
    assert ridge["Peak TFLOP/s"] == 989 and roof[-1]["TFLOP/s"] == 989
    assert json.loads(at.get("vega_lite_chart")[0].proto.spec)["title"]["text"] == "Roofline: H100 SXM, bf16"
    assert not at.warning
    at.selectbox(key="linear.gpu").set_value("V100 SXM2 32GB").run()
    assert at.warning[0].value == lessons.sentence("linear", "no_bf16", gpu="V100 SXM2 32GB")


@pytest.mark.parametrize(
    ("n_in", "m_out", "batch", "dtype", "gpu"),
    [(256, 256, 1, "fp32", "L4"), (8192, 8192, 256, "fp16", "H200"), (256, 8192, 256, "bf16", "T4")],
)
def test_no_exception_at_the_slider_extremes(n_in, m_out, batch, dtype, gpu):
    at = _open()
    at.slider(key="linear.n_in").set_value(n_in)
    at.slider(key="linear.m_out").set_value(m_out)
    at.slider(key="linear.batch").set_value(batch)
    at.selectbox(key="linear.dtype").set_value(dtype)
    at.selectbox(key="linear.gpu").set_value(gpu).run()
    assert not at.exception
    assert _tiles(at)["MACs (forward)"] == f"{n_in * m_out * batch:,}"
    assert len(_chart_rows(at)[2]) == 4


def test_settings_survive_a_visit_to_another_page():
    at = open_page(PAGE)
    at.slider(key="linear.n_in").set_value(1024)
    at.selectbox(key="linear.gpu").set_value("RTX 4090").run()
    open_page("pages/execution_stack.py", at=at)
    open_page(PAGE, at=at)
    assert at.slider(key="linear.n_in").value == 1024
    assert at.selectbox(key="linear.gpu").value == "RTX 4090"
    assert _tiles(at)["Parameters"] == f"{4096 * 1024 + 4096:,}"


def test_the_same_flops_question_locks_after_answering():
    at = open_page(PAGE)
    answer(at, "c2", "b")
    assert at.session_state["answers"] == {"c2": "b"}
    locked = at.radio(key="marked.c2.locked")
    assert locked.disabled and locked.value == "b"
    at.slider(key="linear.batch").set_value(8).run()  # moving a slider leaves the answer alone
    assert at.radio(key="marked.c2.locked").value == "b" and at.success


def test_a_share_link_opens_the_page_with_its_setup():
    at = AppTest.from_file(str(HOME), default_timeout=30)
    at.query_params.update({"n_in": "1024", "m_out": "100000", "batch": "8", "dtype": "bf16"})
    open_page(PAGE, at=at)
    assert not at.exception
    assert at.slider(key="linear.n_in").value == 1024
    assert at.slider(key="linear.m_out").value == 8192  # clamped to the slider's maximum
    assert at.selectbox(key="linear.dtype").value == "bf16"
    assert any("adjusted to 8192" in w.value for w in at.warning)
    assert not at.code  # the link is built only once its box is opened
    open_box(at, share_open_key("linear"))
    assert "n_in=1024" in at.code[0].value and "m_out=8192" in at.code[0].value


def test_the_roofline_waits_for_three_locked_placements_and_keeps_them():
    at = open_page(PAGE)
    assert not at.get("vega_lite_chart") and at.info[-1].value == lessons.sentence("linear", "locked")
    predict(at, "linear.layer", "memory-bound")
    predict(at, "linear.matmul", "compute-bound")
    assert not at.get("vega_lite_chart")
    predict(at, "linear.gelu", "memory-bound")
    assert at.get("vega_lite_chart")
    # Defaults (A100 80GB, fp32): layer and matmul compute-bound, GELU memory-bound.
    records = at.session_state["records"]
    assert records["predict.linear.layer"] == {"choice": "memory-bound", "actual": "compute-bound"}
    assert records["predict.linear.gelu"] == {"choice": "memory-bound", "actual": "memory-bound"}
    at.selectbox(key="linear.gpu").set_value("H200").run()  # a later change never rewrites a locked guess
    assert at.session_state["records"]["predict.linear.layer"]["actual"] == "compute-bound"


def test_on_the_h200_the_measured_kernels_sit_under_the_roof():
    at = _open()
    at.selectbox(key="linear.gpu").set_value("H200").run()
    at.selectbox(key="linear.dtype").set_value("bf16").run()
    layers = _chart_rows(at)
    measured, roof = layers[-1], layers[0]
    assert len(measured) == 22  # BF16: 7 linear layers, 5 matmuls, 5 GELUs, 5 LayerNorms
    peak = max(r["TFLOP/s"] for r in roof)
    assert all(r["Achieved TFLOP/s"] < peak for r in measured)
    prose = " ".join(m.value for m in at.markdown)
    # The 4096² BF16 matmul reached 745 TFLOP/s, 75% of the 989 TFLOP/s peak; GELU 2.9 TFLOP/s.
    assert all(figure in prose for figure in ("**745 TFLOP/s**", "(75%", "989 TFLOP/s", "**2.9 TFLOP/s**"))
    assert "13.5 µs" in prose  # the smallest kernel's floor


def test_nn_linear_is_wx_plus_b_with_no_activation():
    at = open_page(PAGE)
    title = lessons.sentence("linear", "title")
    assert headings(at, 1) == [title]
    prose = lessons.text("linear", "intro")
    assert at.markdown[0].value == f"# {title}\n\n{prose}"  # the title, the intro under it
    assert "$y = Wx + b$" in prose and "sigma" not in prose


def _url(at: AppTest) -> dict[str, list[str]]:
    """The page's query parameters, each as the list of its values."""
    return {name: value if isinstance(value, list) else [value] for name, value in at.query_params.items()}


def test_the_address_bar_holds_only_the_settings_that_left_their_defaults():
    at = open_page(PAGE)
    assert _url(at) == {}  # a first visit writes nothing: one press of Back leaves the page
    at.slider(key="linear.batch").set_value(8).run()
    at.selectbox(key="linear.dtype").set_value("bf16").run()
    assert _url(at) == {"batch": ["8"], "dtype": ["bf16"]}
    at.slider(key="linear.batch").set_value(32).run()  # back at its default, so out of the URL
    assert _url(at) == {"dtype": ["bf16"]}


def test_a_link_is_a_whole_setup_what_it_leaves_out_is_at_its_default():
    learner = new_learner_id()
    _session_of(learner, PAGE).slider(key="linear.n_in").set_value(1024).run()
    assert _session_of(learner, PAGE).slider(key="linear.n_in").value == 1024  # kept for a reload
    # A colleague's address bar, which leaves n_in out because theirs is at its default.
    linked = _session_of(learner, PAGE, batch="8")
    assert linked.slider(key="linear.batch").value == 8
    assert linked.slider(key="linear.n_in").value == 4096
    assert _url(linked) == {"batch": ["8"]}


def test_a_small_layer_reads_in_mflops_and_the_weight_tile_leads_with_the_chosen_format():
    at = open_page(PAGE)
    at.slider(key="linear.n_in").set_value(8192)
    at.slider(key="linear.m_out").set_value(256)
    at.slider(key="linear.batch").set_value(1)
    at.selectbox(key="linear.dtype").set_value("bf16").run()
    tiles = _tiles(at)
    # 2 × 8,192 × 256 = 4,194,304 FLOPs; (8,192 × 256 + 256) weights × 2 bytes = 4.19 MB in BF16.
    assert tiles["FLOPs (forward)"] == "4.19 MFLOPs" and tiles["Weight memory"] == "4.19 MB"
    captions = [c.value for c in at.caption]
    # The same weights at FP32's 4 bytes a value: 8.39 MB.
    weights = lessons.sentence(
        "linear", "tile_weights", value_bytes=2, dtype="BF16", other_mb="8.39", other_bytes=4
    )
    assert weights in captions
    shown = " ".join(i.value for i in at.info)
    assert "0.00" not in shown and "**4.19 MFLOPs**" in shown
