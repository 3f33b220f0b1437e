"""Charts drawn from a cached layout: everything but the rows depends only on the chart's shape.

The pages key cached charts by `*_shape(...)` and send `*_datasets(...)` fresh each run, so two
inputs with the same shape must give the same spec once the rows are taken out, and the rows
must be exactly the chart's datasets.
"""

from hypothesis import given, settings
from hypothesis import strategies as st

from charts.memory import (
    budget_chart,
    budget_datasets,
    budget_shape,
    sweep_chart,
    sweep_datasets,
    sweep_shape,
)
from charts.roofline import roofline_chart, roofline_datasets, roofline_shape
from core.gpus import gpu_names
from core.memory.lesson import lesson_sweep, lesson_terms
from core.memory.setup import LessonSetup
from core.roofline import linear_layer_roofline


def _layout(chart) -> tuple[dict, dict]:
    """A chart's spec without its rows, and its rows by dataset name."""
    spec = chart.to_dict()
    return spec, spec.pop("datasets")


sizes = st.sampled_from([256, 1024, 4096, 8192])
batches = st.integers(min_value=1, max_value=256)


@settings(max_examples=20, deadline=None)
@given(
    gpu_name=st.sampled_from(gpu_names()),
    dtype=st.sampled_from(["fp32", "bf16", "fp16"]),
    first=st.tuples(sizes, sizes, batches),
    second=st.tuples(sizes, sizes, batches),
)
def test_the_roofline_layout_depends_only_on_the_card_and_number_format(gpu_name, dtype, first, second):
    views = [
        linear_layer_roofline(n_in=n, m_out=m, batch=b, dtype=dtype, gpu_name=gpu_name)
        for n, m, b in (first, second)
    ]
    (spec_a, rows_a), (spec_b, _) = (_layout(roofline_chart(v.roof, v.points)) for v in views)
    assert roofline_shape(views[0].roof, views[0].points) == roofline_shape(views[1].roof, views[1].points)
    assert spec_a == spec_b
    assert rows_a == roofline_datasets(views[0].roof, views[0].points)


setups = st.builds(
    LessonSetup,
    hidden=st.sampled_from([512, 2048, 4096]),
    layers=st.integers(min_value=1, max_value=48),
    dtype=st.sampled_from(["fp32", "bf16"]),
    optimizer=st.sampled_from(["adam", "sgd"]),
    batch=st.integers(min_value=1, max_value=64),
    seq_len=st.sampled_from([512, 2048, 8192]),
)


@settings(max_examples=20, deadline=None)
@given(first=setups, second=setups, device_gb=st.sampled_from([16.0, 24.0, 80.0]))
def test_budgets_of_the_same_shape_share_a_layout(first, second, device_gb):
    charts = [
        budget_chart([("Budget", lesson_terms(s))], device_gb=device_gb, device_label="GPU", title="T")
        for s in (first, second)
    ]
    bars = [[("Budget", lesson_terms(s))] for s in (first, second)]
    (spec_a, rows_a), (spec_b, _) = (_layout(c) for c in charts)
    assert (spec_a == spec_b) == (budget_shape(bars[0]) == budget_shape(bars[1]))
    assert rows_a == budget_datasets(bars[0], device_gb=device_gb, device_label="GPU")


@settings(max_examples=20, deadline=None)
@given(
    first=setups,
    second=setups,
    axis=st.sampled_from(["batch", "seq_len"]),
    device_gb=st.sampled_from([16.0, 80.0]),
)
def test_sweeps_of_the_same_shape_share_a_layout(first, second, axis, device_gb):
    values = [1, 2, 4, 8, 16, 32] if axis == "batch" else [512, 1024, 2048, 4096, 8192]
    sweeps = [lesson_sweep(s, axis=axis, values=values, device_gb=device_gb) for s in (first, second)]
    (spec_a, rows_a), (spec_b, _) = (_layout(sweep_chart(s, device_label="GPU", title="T")) for s in sweeps)
    assert (spec_a == spec_b) == (sweep_shape(sweeps[0]) == sweep_shape(sweeps[1]))
    assert rows_a == sweep_datasets(sweeps[0], device_label="GPU")
