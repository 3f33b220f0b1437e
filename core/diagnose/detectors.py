"""One detector per failure kind. Each reads the series it needs and returns a verdict with its evidence.

A verdict is `likely`, `possible` or `no sign`. A detector that lacks a column it would decide by
says so in `missing`; a verdict reached without it is less sure, and the wording says that.
Thresholds are named constants, explained where they are defined; docs/teaching.md, "Your run", lists them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from core import lessons
from core.diagnose.columns import RunLog, Series
from core.diagnose.learning_rate import rate_jump_grows_gradients
from core.diagnose.stats import finite_points, line_fit, mad, median, rolling_median
from core.stack import load_stack
from core.units import capacity_label, duration_label

LIKELY, POSSIBLE, NO_SIGN = "likely", "possible", "no sign"
VERDICTS = (LIKELY, POSSIBLE, NO_SIGN)
KINDS = ("resource", "throughput", "numerical", "correctness")

MIN_POINTS = 8  # fewer logged values than this say nothing about a trend
# Numerical: a spike is a loss far above the median of the values just before it.
SPIKE_WINDOW = 20
SPIKE_MADS = 6.0  # ... by more than six median absolute deviations
SPIKE_RATIO = 1.0  # ... and to more than double the recent level, so batch-to-batch noise never counts
GRAD_BLOWUP_RATIO = 10.0  # a gradient norm ten times its usual size has blown up
# Correctness: how far the loss fell from its first tenth to its last tenth.
LEARNING_DROP = 0.05  # under 5% lower at the end: it stopped improving (or never started)
CHANCE_TOLERANCE = 0.05  # within 5% of ln(classes): it sits at chance
# Resource: memory that rises along a straight line after warm-up is a leak.
WARMUP_FRACTION = 0.1  # the first tenth of a run allocates optimizer state and caches; leave it out
LEAK_R_SQUARED = 0.8
LEAK_RISE_LIKELY = 0.2  # rose by a fifth of where it started
LEAK_RISE_POSSIBLE = 0.1
NEAR_LIMIT_LIKELY = 0.95  # peak memory as a fraction of the device
NEAR_LIMIT_POSSIBLE = 0.85
# Throughput.
UTILISATION_LIKELY_PCT = 50.0
UTILISATION_POSSIBLE_PCT = 80.0
DATA_WAIT_LIKELY = 0.3  # share of each step spent waiting for the next batch
DATA_WAIT_POSSIBLE = 0.1
MFU_LIKELY = 0.1
MFU_POSSIBLE = 0.25
FLOPS_PER_PARAM_TOKEN = 6  # forward 2 + backward 4 FLOPs per parameter per token (dense training)


@dataclass(frozen=True)
class RunContext:
    """What the learner tells us beside the log: chance level, device memory, model size and GPU peak."""

    classes: int | None = None
    vocab: int | None = None
    device_gb: float | None = None
    params: float | None = None
    peak_tflops: float | None = None

    def __post_init__(self) -> None:
        if self.classes is not None and self.vocab is not None:
            raise ValueError("Give the number of classes or the vocabulary size, not both.")
        for name in ("classes", "vocab"):
            value = getattr(self, name)
            if value is not None and value < 2:
                raise ValueError(f"The number of {name} must be at least 2, got {value}.")
        for name in ("device_gb", "params", "peak_tflops"):
            value = getattr(self, name)
            if value is not None and not (math.isfinite(value) and value > 0):
                raise ValueError(f"{name} must be a positive number, got {value}.")

    @property
    def chance_loss(self) -> float | None:
        """Cross-entropy of a uniform guess, ln(classes) or ln(vocabulary), when one is given."""
        count = self.classes or self.vocab
        return math.log(count) if count else None

    @property
    def chance_source(self) -> str:
        """How the chance level was found, for the evidence."""
        if self.classes:
            return lessons.sentence("diagnose", "chance_classes", classes=self.classes)
        return lessons.sentence("diagnose", "chance_vocab", vocab=self.vocab)


@dataclass(frozen=True)
class Marks:
    """What the charts mark: steps and levels found as evidence (None when not found)."""

    nan_step: float | None = None
    spike_steps: tuple[float, ...] = ()
    plateau_step: float | None = None
    chance_loss: float | None = None
    device_limit_gb: float | None = None
    memory_trend: tuple[float, float, float, float] | None = None  # first step, value, last step, value


@dataclass(frozen=True)
class Finding:
    """One detector's answer: verdict, one-line summary, evidence, what would decide, and the next step."""

    kind: str
    verdict: str
    summary: str
    evidence: tuple[str, ...]
    missing: tuple[str, ...]
    next_step: str
    page: str
    page_title: str
    marks: Marks = field(default_factory=Marks)


def _measurement(symptom_id: str) -> str:
    return next(s.first_measurement for s in load_stack().symptoms if s.id == symptom_id)


def _strongest(*verdicts: str) -> str:
    return min(verdicts, key=VERDICTS.index)


# --- numerical ---------------------------------------------------------------------------------


def first_non_finite(series: Series) -> tuple[float, float] | None:
    """The first (step, value) whose value is nan or infinite, or None if every value is finite."""
    for step, value in zip(series.steps, series.values, strict=True):
        if not math.isfinite(value):
            return step, value
    return None


def spike_steps(series: Series) -> tuple[float, ...]:
    """Steps where the value jumps far above the median of the values just before it."""
    steps, values = finite_points(series.steps, series.values)
    levels = rolling_median(values, SPIKE_WINDOW)  # levels[i - 1]: the median of the window before i
    found = []
    for i in range(SPIKE_WINDOW, len(values)):
        rise, level = values[i] - levels[i - 1], levels[i - 1]
        # The spread is worked out only for a rise past the ratio: most points stop at the first test.
        if (
            rise > SPIKE_RATIO * abs(level)
            and rise > max(SPIKE_MADS * mad(values[i - SPIKE_WINDOW : i]), SPIKE_RATIO * abs(level)) > 0
        ):
            found.append(steps[i])
    return tuple(found)


def _grad_blowup(grad: Series, before: float | None) -> tuple[float, float, float] | None:
    """(step, peak, usual level) when the gradient norm rose ten times its median, before `before`."""
    steps, values = finite_points(grad.steps, grad.values)
    kept = [(s, v) for s, v in zip(steps, values, strict=True) if before is None or s < before]
    if len(kept) < 2:
        return None
    usual = median([v for _, v in kept[: max(1, len(kept) // 2)]])
    step, peak = max(kept, key=lambda pair: pair[1])
    return (step, peak, usual) if usual > 0 and peak >= GRAD_BLOWUP_RATIO * usual else None


def numerical(run: RunLog) -> Finding:
    """Nan or inf in the loss or gradient norm (likely); loss spikes or a gradient blow-up (possible)."""
    loss, grad = run.get("loss"), run.get("grad_norm")
    page, title = "pages/execution_stack.py", "Execution stack"
    if loss is None and grad is None:
        return Finding(
            "numerical",
            NO_SIGN,
            lessons.sentence("diagnose", "numerical_no_columns"),
            (),
            (lessons.sentence("diagnose", "missing_loss"), lessons.sentence("diagnose", "missing_grad_norm")),
            _measurement("nan"),
            page,
            title,
        )
    bad = [(found, s.column) for s in (loss, grad) if s is not None and (found := first_non_finite(s))]
    evidence: list[str] = []
    verdict = NO_SIGN
    nan_step = min((found[0] for found, _ in bad), default=None)
    if bad:
        (step, value), column = min(bad, key=lambda item: item[0][0])
        evidence.append(
            lessons.sentence("diagnose", "first_nan", column=column, step=step)
            if math.isnan(value)
            else lessons.sentence("diagnose", "first_infinite", column=column, step=step)
        )
        source = loss or grad
        assert source is not None
        finite_before = [
            v for s, v in zip(source.steps, source.values, strict=True) if s < step and math.isfinite(v)
        ]
        if finite_before:
            evidence.append(
                lessons.sentence("diagnose", "last_finite", column=source.column, value=finite_before[-1])
            )
        verdict = LIKELY
    spikes = spike_steps(loss) if loss is not None else ()
    spikes = tuple(s for s in spikes if nan_step is None or s < nan_step)
    if spikes:
        evidence.append(lessons.sentence("diagnose", "loss_spikes", count=len(spikes), step=spikes[0]))
        verdict = _strongest(verdict, POSSIBLE)
    blowup = _grad_blowup(grad, nan_step) if grad is not None else None
    if blowup:
        step, peak, usual = blowup
        evidence.append(
            lessons.sentence("diagnose", "grad_blowup", peak=peak, step=step, ratio=peak / usual, usual=usual)
            if nan_step is None
            else lessons.sentence(
                "diagnose", "grad_blowup_before_nan", peak=peak, step=step, ratio=peak / usual, usual=usual
            )
        )
        verdict = _strongest(verdict, POSSIBLE)
    rate = run.get("learning_rate")
    jump = rate_jump_grows_gradients(rate, grad) if rate is not None and grad is not None else None
    if jump is not None:
        evidence.append(
            lessons.sentence(
                "diagnose",
                "rate_jump_grew_gradients",
                ratio=jump.ratio,
                step=jump.step,
                rate_before=jump.rate_before,
                rate_after=jump.rate_after,
                grad_before=jump.grad_before,
                grad_after=jump.grad_after,
                window=jump.window,
            )
        )
        verdict = _strongest(verdict, POSSIBLE)
    marks = Marks(nan_step=nan_step, spike_steps=spikes)
    summary = {
        LIKELY: lessons.sentence("diagnose", "numerical_likely"),
        POSSIBLE: lessons.sentence("diagnose", "numerical_possible"),
        NO_SIGN: lessons.sentence("diagnose", "numerical_no_sign"),
    }[verdict]
    return Finding(
        "numerical",
        verdict,
        summary,
        tuple(evidence),
        _numerical_missing(grad, rate, verdict),
        _numerical_next_step(grad, jump.step if jump else None),
        page,
        title,
        marks,
    )


def _numerical_missing(grad: Series | None, rate: Series | None, verdict: str) -> tuple[str, ...]:
    """The columns that would decide: the gradient norm first, then the rate once something is wrong."""
    if grad is None:
        return (lessons.sentence("diagnose", "missing_grad_norm_why"),)
    if rate is None and verdict != NO_SIGN:
        return (lessons.sentence("diagnose", "missing_learning_rate_why"),)
    return ()


def _numerical_next_step(grad: Series | None, jump_step: float | None) -> str:
    """What to measure next, never asking for a column the log already has."""
    if jump_step is not None:
        return lessons.sentence("diagnose", "numerical_next_step_rate", step=jump_step)
    if grad is not None:
        return lessons.sentence("diagnose", "numerical_next_step_with_grad")
    return _measurement("nan")


# --- correctness -------------------------------------------------------------------------------


def plateau_step(steps: list[float], values: list[float]) -> float:
    """The first step from which the loss, smoothed over a tenth of the run, stays near its final level."""
    width = max(3, len(values) // 10)
    smoothed = rolling_median(values, width)
    final = median(values[-width:])
    start = median(values[:width])
    tolerance = max(0.02 * abs(final), 0.1 * max(0.0, start - final))
    # The plateau starts just after the last smoothed value that is still far from the final level.
    far = [i for i, v in enumerate(smoothed) if abs(v - final) > tolerance]
    if not far:
        return steps[0]
    return steps[min(far[-1] + 1, len(steps) - 1)]


def correctness(run: RunLog, context: RunContext) -> Finding:
    """Loss that stops improving (possible), at the chance level ln(classes) or ln(vocabulary) (likely)."""
    loss = run.get("loss")
    page, title = "pages/execution_stack.py", "Execution stack"
    measure = _measurement("flat")
    chance = context.chance_loss
    if loss is None:
        return Finding(
            "correctness",
            NO_SIGN,
            lessons.sentence("diagnose", "correctness_no_loss"),
            (),
            (lessons.sentence("diagnose", "missing_loss"),),
            measure,
            page,
            title,
            Marks(chance_loss=chance),
        )
    broken = first_non_finite(loss)
    if broken is not None:
        return Finding(
            "correctness",
            NO_SIGN,
            lessons.sentence("diagnose", "correctness_non_finite", step=broken[0]),
            (),
            (),
            measure,
            page,
            title,
            Marks(chance_loss=chance),
        )
    steps, values = finite_points(loss.steps, loss.values)
    if len(values) < MIN_POINTS:
        return Finding(
            "correctness",
            NO_SIGN,
            lessons.sentence("diagnose", "correctness_too_few", count=len(values)),
            (),
            (lessons.sentence("diagnose", "missing_more_steps"),),
            measure,
            page,
            title,
            Marks(chance_loss=chance),
        )
    width = max(3, len(values) // 10)
    start, end = median(values[:width]), median(values[-width:])
    drop = (start - end) / abs(start) if start else 0.0
    plateau = plateau_step(steps, values)
    evidence = [
        lessons.sentence("diagnose", "loss_dropped", start=start, end=end, change=abs(drop))
        if drop >= 0
        else lessons.sentence("diagnose", "loss_rose", start=start, end=end, change=abs(drop)),
        lessons.sentence("diagnose", "loss_stayed_near", end=end, step=plateau),
    ]
    at_chance = chance is not None and abs(end - chance) <= CHANCE_TOLERANCE * chance
    if chance is not None:
        evidence.append(
            lessons.sentence(
                "diagnose", "ends_at_chance", chance_source=context.chance_source, chance_loss=chance
            )
            if at_chance
            else lessons.sentence(
                "diagnose",
                "ends_off_chance",
                chance_source=context.chance_source,
                chance_loss=chance,
                offset_percent=100 * abs(end - chance) / chance,
                side="above" if end > chance else "below",
            )
        )
    evidence.extend(_accuracy_evidence(run, context))
    if at_chance:
        verdict = LIKELY
    elif drop < LEARNING_DROP:
        verdict = POSSIBLE
    else:
        verdict = NO_SIGN
    summary = {
        LIKELY: lessons.sentence("diagnose", "correctness_likely"),
        POSSIBLE: lessons.sentence("diagnose", "correctness_possible")
        if chance is not None
        else lessons.sentence("diagnose", "correctness_possible_no_chance"),
        NO_SIGN: lessons.sentence("diagnose", "correctness_no_sign"),
    }[verdict]
    missing = (
        ()
        if chance is not None or verdict == NO_SIGN
        else (lessons.sentence("diagnose", "missing_chance_level"),)
    )
    marks = Marks(plateau_step=plateau if verdict != NO_SIGN else None, chance_loss=chance)
    return Finding("correctness", verdict, summary, tuple(evidence), missing, measure, page, title, marks)


def _accuracy_evidence(run: RunLog, context: RunContext) -> list[str]:
    accuracy = run.get("accuracy")
    if accuracy is None:
        return []
    _, values = finite_points(accuracy.steps, accuracy.values)
    if not values:
        return []
    end = median(values[-max(1, len(values) // 10) :])
    if context.classes:
        return [
            lessons.sentence(
                "diagnose",
                "accuracy_end_against_guessing",
                accuracy_pct=end,
                classes=context.classes,
                guess_pct=100 / context.classes,
            )
        ]
    return [lessons.sentence("diagnose", "accuracy_end", accuracy_pct=end)]


# --- resource ----------------------------------------------------------------------------------


def memory_trend(memory: Series) -> tuple[list[float], list[float]] | None:
    """The memory points after warm-up (the first tenth of the run), or None when too few are left."""
    steps, values = finite_points(memory.steps, memory.values)
    skip = max(1, int(len(values) * WARMUP_FRACTION))
    steps, values = steps[skip:], values[skip:]
    return (steps, values) if len(values) >= MIN_POINTS and steps[0] != steps[-1] else None


def resource(run: RunLog, context: RunContext) -> Finding:
    """Memory rising along a line after warm-up (a leak), or a peak close to the device limit."""
    memory = run.get("memory")
    limit = context.device_gb
    marks = Marks(device_limit_gb=limit)
    if memory is None:
        return Finding(
            "resource",
            NO_SIGN,
            lessons.sentence("diagnose", "resource_no_memory"),
            (),
            (lessons.sentence("diagnose", "missing_memory"),),
            _measurement("oom"),
            "pages/memory_budget.py",
            "Memory budget",
            marks,
        )
    trend = memory_trend(memory)
    evidence = [
        lessons.sentence("diagnose", "memory_column", column=memory.column, unit_note=memory.unit_note)
    ]
    leak = NO_SIGN
    if trend is None:
        evidence.append(lessons.sentence("diagnose", "memory_too_few"))
    else:
        steps, values = trend
        fit = line_fit(steps, values)
        rise = (fit.end_value - fit.start_value) / abs(fit.start_value) if fit.start_value else 0.0
        if fit.slope > 0 and fit.r_squared >= LEAK_R_SQUARED and rise >= LEAK_RISE_POSSIBLE:
            leak = LIKELY if rise >= LEAK_RISE_LIKELY else POSSIBLE
            evidence.append(
                lessons.sentence(
                    "diagnose",
                    "memory_rose",
                    start_gb=fit.start_value,
                    end_gb=fit.end_value,
                    rise=rise,
                    first_step=steps[0],
                    last_step=steps[-1],
                    mb_per_step=fit.slope * 1e3,
                    r_squared=fit.r_squared,
                )
            )
            if limit is not None and fit.end_value < limit:
                evidence.append(
                    lessons.sentence(
                        "diagnose",
                        "memory_reaches_limit",
                        limit_gb=limit,
                        steps=(limit - fit.end_value) / fit.slope,
                    )
                )
        else:
            evidence.append(
                lessons.sentence("diagnose", "memory_flat", low_gb=min(values), high_gb=max(values))
            )
        marks = Marks(
            device_limit_gb=limit,
            memory_trend=(steps[0], fit.start_value, steps[-1], fit.end_value) if leak != NO_SIGN else None,
        )
    full, missing = _limit_verdict(memory, limit, evidence)
    verdict = _strongest(leak, full)
    if leak != NO_SIGN:
        summary = lessons.sentence("diagnose", "resource_leak")
        next_step = lessons.sentence("diagnose", "resource_leak_next_step")
        page, title = "pages/run_a.py", "Run A experiment"
    else:
        summary = {
            LIKELY: lessons.sentence("diagnose", "resource_likely"),
            POSSIBLE: lessons.sentence("diagnose", "resource_possible"),
            NO_SIGN: lessons.sentence("diagnose", "resource_no_sign_below_limit")
            if limit
            else lessons.sentence("diagnose", "resource_no_sign"),
        }[full]
        next_step, page, title = _measurement("oom"), "pages/memory_budget.py", "Memory budget"
    return Finding("resource", verdict, summary, tuple(evidence), missing, next_step, page, title, marks)


def _limit_verdict(memory: Series, limit: float | None, evidence: list[str]) -> tuple[str, tuple[str, ...]]:
    if limit is None:
        return NO_SIGN, (lessons.sentence("diagnose", "missing_device_memory"),)
    _, values = finite_points(memory.steps, memory.values)
    peak = max(values, default=0.0)
    share = peak / limit
    evidence.append(
        lessons.sentence(
            "diagnose",
            "memory_peak_share",
            peak_gb=peak,
            share=share,
            device=capacity_label(round(limit * 1e9)),
        )
    )
    if share >= NEAR_LIMIT_LIKELY:
        return LIKELY, ()
    return (POSSIBLE if share >= NEAR_LIMIT_POSSIBLE else NO_SIGN), ()


# --- throughput --------------------------------------------------------------------------------


def _level(series: Series | None) -> float | None:
    if series is None:
        return None
    _, values = finite_points(series.steps, series.values)
    return median(values) if values else None


def _grade_below(value: float, likely: float, possible: float) -> str:
    """`likely` below the first threshold, `possible` below the second, else no sign."""
    return LIKELY if value < likely else POSSIBLE if value < possible else NO_SIGN


def _grade_above(value: float, likely: float, possible: float) -> str:
    """`likely` at or above the first threshold, `possible` at or above the second, else no sign."""
    return LIKELY if value >= likely else POSSIBLE if value >= possible else NO_SIGN


def throughput(run: RunLog, context: RunContext) -> Finding:
    """Low utilisation, much of each step spent waiting for data, or an MFU far below the GPU's peak."""
    evidence: list[str] = []
    verdicts: list[str] = []
    missing: list[str] = []
    utilisation = _level(run.get("utilisation"))
    if utilisation is not None:
        verdicts.append(_grade_below(utilisation, UTILISATION_LIKELY_PCT, UTILISATION_POSSIBLE_PCT))
        evidence.append(lessons.sentence("diagnose", "median_utilisation", utilisation_pct=utilisation))
    data_time, step_time = _level(run.get("data_time")), _level(run.get("step_time"))
    if data_time is not None and step_time:
        share = data_time / step_time
        verdicts.append(_grade_above(share, DATA_WAIT_LIKELY, DATA_WAIT_POSSIBLE))
        evidence.append(
            lessons.sentence(
                "diagnose",
                "data_wait",
                step_time=duration_label(step_time),
                data_time=duration_label(data_time, unit_of=step_time),
                share=share,
            )
        )
    elif data_time is not None or step_time is not None:
        missing.append(
            lessons.sentence("diagnose", "missing_step_time")
            if data_time is not None
            else lessons.sentence("diagnose", "missing_data_time")
        )
    tokens = _level(run.get("tokens_per_s"))
    if tokens is not None and context.params and context.peak_tflops:
        mfu = FLOPS_PER_PARAM_TOKEN * context.params * tokens / (context.peak_tflops * 1e12)
        verdicts.append(_grade_below(mfu, MFU_LIKELY, MFU_POSSIBLE))
        evidence.append(
            lessons.sentence(
                "diagnose",
                "mfu",
                tokens_per_s=tokens,
                flops_per_param_token=FLOPS_PER_PARAM_TOKEN,
                params=context.params,
                achieved_tflops=FLOPS_PER_PARAM_TOKEN * context.params * tokens / 1e12,
                peak_tflops=context.peak_tflops,
                mfu=mfu,
            )
        )
    elif tokens is not None:
        missing.append(lessons.sentence("diagnose", "missing_mfu_inputs"))
    samples = _level(run.get("samples_per_s"))
    if samples is not None:
        evidence.append(lessons.sentence("diagnose", "median_samples", samples_per_s=samples))
    if not verdicts:
        missing.append(lessons.sentence("diagnose", "missing_throughput_columns"))
    verdict = _strongest(*verdicts) if verdicts else NO_SIGN
    summary = {
        LIKELY: lessons.sentence("diagnose", "throughput_likely"),
        POSSIBLE: lessons.sentence("diagnose", "throughput_possible"),
        NO_SIGN: lessons.sentence("diagnose", "throughput_no_sign")
        if verdicts
        else lessons.sentence("diagnose", "throughput_no_columns"),
    }[verdict]
    return Finding(
        "throughput",
        verdict,
        summary,
        tuple(evidence),
        tuple(missing),
        _measurement("low_util"),
        "pages/execution_stack.py",
        "Execution stack",
    )
