"""Units read from column names as PyTorch, nvidia-smi and W&B write them, step time spelled `iter_ms`,
and a jump in the learning rate that the gradient norm answers."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from core import lessons
from core.diagnose.columns import RunLog, Series, guess_mapping, normalise, run_log
from core.diagnose.detectors import LIKELY, NO_SIGN, POSSIBLE, RunContext, numerical, resource, throughput
from core.diagnose.formats import read_log


def _series(run: RunLog, role: str) -> Series:
    found = run.get(role)
    assert found is not None, f"the log has no {role}"
    return found


def _csv_run(text: str) -> RunLog:
    table = read_log(text.encode(), "run.csv")
    return run_log(table, guess_mapping(table.columns))


# 1,024 of each unit, in GB: 1,024 MiB is 2^30 bytes, 1.073741824 GB.
@pytest.mark.parametrize(
    ("column", "gb"),
    [
        ("cuda_mem_MiB", 1.073741824),
        ("mem_MiB", 1.073741824),
        ("max_memory_allocated_MiB", 1.073741824),
        ("gpu_mem_GiB", 1099.511627776),
        ("memory/allocated (GiB)", 1099.511627776),
        ("maxMemoryAllocatedMiB", 1.073741824),
        ("memory.used [MiB]", 1.073741824),  # nvidia-smi --format=csv
        ("mem_MB", 1.024),
        ("mem_KiB", 1.048576e-3),
        ("gpu_mem_allocated_bytes", 1.024e-6),
    ],
)
def test_memory_columns_named_as_pytorch_and_nvidia_smi_name_them(column: str, gb: float) -> None:
    run = _csv_run(f"step,{column}\n1,1024\n")
    memory = _series(run, "memory")
    assert memory.column == column
    assert memory.values[0] == pytest.approx(gb, rel=1e-12)


def test_binary_units_stay_one_word_when_names_are_normalised() -> None:
    assert normalise("cuda_mem_MiB") == "cuda_mem_mib"
    assert normalise("gpu_mem_GiB") == "gpu_mem_gib"
    assert normalise("memory/allocated (GiB)") == "memory_allocated_gib"
    assert normalise("maxMemoryAllocatedMiB") == "max_memory_allocated_mib"
    assert normalise("system/gpu.0.memoryAllocatedBytes") == "system_gpu_0_memory_allocated_bytes"


def test_a_25_mib_a_step_leak_reads_26_21_mb_a_step() -> None:
    # 10 GiB plus 25 MiB every step for 200 steps. After warm-up (steps 0-19 left out) the fit runs
    # from 10,240 + 25 × 20 = 10,740 MiB (11.262 GB) to 10,240 + 25 × 199 = 15,215 MiB (15.954 GB);
    # 25 MiB = 25 × 1,048,576 bytes = 26.21 MB a step.
    rows = "".join(f"{step},{10240 + 25 * step}\n" for step in range(200))
    run = _csv_run("step,max_memory_allocated_MiB\n" + rows)
    finding = resource(run, RunContext(device_gb=25.769803776))
    assert finding.verdict == LIKELY
    rose = lessons.sentence(
        "diagnose",
        "memory_rose",
        start_gb=10740 * 2**20 / 1e9,
        end_gb=15215 * 2**20 / 1e9,
        rise=(15215 - 10740) / 10740,
        first_step=20,
        last_step=199,
        mb_per_step=25 * 2**20 / 1e6,
        r_squared=1.0,
    )
    assert rose in finding.evidence
    assert "26.21 MB a step" in rose


def test_iter_ms_is_step_time_so_a_40_ms_data_wait_in_a_60_ms_step_is_found() -> None:
    rows = "".join(f"{step},60,40\n" for step in range(30))
    run = _csv_run("step,iter_ms,data_ms\n" + rows)
    assert _series(run, "step_time").values[0] == pytest.approx(0.060)
    assert _series(run, "data_time").values[0] == pytest.approx(0.040)
    finding = throughput(run, RunContext())
    assert finding.verdict == LIKELY  # 40 / 60 = 67% of each step waiting, above the 30% threshold
    assert "(67%)" in finding.evidence[0]
    assert lessons.sentence("diagnose", "missing_step_time") not in finding.missing


def test_an_iteration_counter_beside_iter_ms_stays_the_step() -> None:
    mapping = guess_mapping(("iter", "iter_ms", "loss"))
    assert mapping["step"] == "iter" and mapping["step_time"] == "iter_ms"


def _rate_jump_log(grad_after: list[float]) -> RunLog:
    # 3e-4 for steps 0-99, then ten times that; the gradient norm is 1.0 before the jump.
    rows = []
    for step in range(100 + len(grad_after)):
        rate = 3e-4 if step < 100 else 3e-3
        grad = 1.0 + 0.01 * (step % 3) if step < 100 else grad_after[step - 100]
        rows.append(f"{step},{2.0 - 0.001 * step},{grad},{rate}\n")
    return _csv_run("step,loss,grad_norm,lr\n" + "".join(rows))


def test_a_tenfold_rate_jump_that_grows_the_gradient_norm_is_evidence_and_the_next_step() -> None:
    # After the jump the norm grows by 0.15 a step: 1.15, 1.30 ... 4.0 at step 119; never ten times
    # its usual 1.01, so the blow-up test alone says nothing. Median of the 20 before: 1.01; after: 2.575.
    grown = [1.0 + 0.15 * (i + 1) for i in range(20)]
    finding = numerical(_rate_jump_log(grown))
    assert finding.verdict == POSSIBLE
    jump = lessons.sentence(
        "diagnose",
        "rate_jump_grew_gradients",
        ratio=10.0,
        step=100,
        rate_before=3e-4,
        rate_after=3e-3,
        grad_before=1.01,
        grad_after=2.575,
        window=20,
    )
    assert jump in finding.evidence
    assert finding.next_step == lessons.sentence("diagnose", "numerical_next_step_rate", step=100)
    assert "Log the gradient norm" not in finding.next_step


def test_a_rate_jump_the_gradients_do_not_answer_is_no_sign() -> None:
    finding = numerical(_rate_jump_log([1.0] * 20))
    assert finding.verdict == NO_SIGN
    assert finding.evidence == ()


def test_with_a_gradient_norm_logged_the_advice_never_asks_to_log_it() -> None:
    grad = [1.0] * 40 + [50.0] + [1.0] * 10  # a blow-up fifty times the usual norm, no rate logged
    table = read_log(
        ("step,grad_norm\n" + "".join(f"{i},{g}\n" for i, g in enumerate(grad))).encode(), "g.csv"
    )
    finding = numerical(run_log(table, guess_mapping(table.columns)))
    assert finding.verdict == POSSIBLE
    assert finding.next_step == lessons.sentence("diagnose", "numerical_next_step_with_grad")
    assert finding.missing == (lessons.sentence("diagnose", "missing_learning_rate_why"),)


# --- every spelling of a unit --------------------------------------------------------------------

_GB_PER_UNIT = {
    "MiB": 2**20 / 1e9,
    "MB": 1e-3,
    "GiB": 2**30 / 1e9,
    "GB": 1.0,
    "KiB": 2**10 / 1e9,
    "bytes": 1e-9,
}
_UNIT_SPELLINGS = {
    "MiB": ("MiB", "mib"),
    "MB": ("MB", "mb"),
    "GiB": ("GiB", "gib"),
    "GB": ("GB", "gb"),
    "KiB": ("KiB", "kib"),
    "bytes": ("bytes", "Bytes", "BYTES"),
}
_BASES = ("cuda_mem", "mem", "max_memory_allocated", "gpu_mem", "memory/allocated", "memoryAllocated")
# Between the name and its unit: snake case, a space, brackets as nvidia-smi and plots write them,
# W&B's slash, a dash, a dot, a colon, and camelCase (the unit straight after the name).
_SEPARATED = ("{}_{}", "{} {}", "{} ({})", "{} [{}]", "{}/{}", "{}-{}", "{}.{}", "{}: {}", "{}{}")


@given(
    base=st.sampled_from(_BASES),
    unit=st.sampled_from(sorted(_GB_PER_UNIT)),
    spelling=st.integers(min_value=0, max_value=2),
    form=st.sampled_from(_SEPARATED),
    value=st.floats(min_value=0.5, max_value=5e10, allow_nan=False),
)
def test_every_unit_spelling_reads_in_gb(
    base: str, unit: str, spelling: int, form: str, value: float
) -> None:
    spellings = _UNIT_SPELLINGS[unit]
    written = spellings[spelling % len(spellings)]
    if form == "{}{}" and not written[0].isupper():
        written = written[0].upper() + written[1:]  # camelCase needs the capital to end the name
    column = form.format(base, written)
    table = read_log(f"step,{column}\n1,{value!r}\n".encode(), "m.csv")
    memory = _series(run_log(table, guess_mapping(table.columns)), "memory")
    assert memory.values[0] == pytest.approx(value * _GB_PER_UNIT[unit], rel=1e-9)
    assert math.isfinite(memory.values[0])
