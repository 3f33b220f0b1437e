"""What other pages hand the report: the layer and the memory budget the learner left, as figures."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class LayerFigures:
    """The linear layer the learner configured, and its cost for one forward pass."""

    n_in: int
    m_out: int
    batch: int
    flops: float

    @property
    def gflops(self) -> float:
        """Forward-pass cost in billions of floating-point operations."""
        return self.flops / 1e9

    def sentence(self) -> str:
        """One line describing the layer and its cost."""
        return (
            f"A {self.n_in:,} → {self.m_out:,} linear layer at batch {self.batch:,} does "
            f"{readable_flops(self.flops)} in one forward pass."
        )


FLOP_UNITS = ((1e12, "TFLOPs"), (1e9, "GFLOPs"), (1e6, "MFLOPs"), (1e3, "kFLOPs"))


def readable_flops(flops: float) -> str:
    """A FLOP count to three significant figures in the largest unit it fills, e.g. `131 MFLOPs`."""
    if not (flops >= 0 and flops != float("inf")):
        raise ValueError(f"A FLOP count must be a finite number of at least zero, got {flops!r}.")
    for size, unit in FLOP_UNITS:
        if flops >= size:
            return f"{_significant(flops / size)} {unit}"
    return f"{_significant(flops)} FLOPs"


def _significant(value: float) -> str:
    """Three significant figures without scientific notation (1.07, 13.4, 537)."""
    digits = max(0, 2 - int(f"{value:e}".split("e")[1])) if value else 0
    return f"{value:,.{digits}f}"


@dataclass(frozen=True)
class BudgetFigures:
    """The training-memory budget the learner left on the memory page (decimal GB)."""

    parameters: float
    total_gb: float
    device_gb: float
    activations_gb: float
    optimizer_gb: float

    @property
    def fits(self) -> bool:
        """Whether the whole budget fits in the device's memory."""
        return self.total_gb <= self.device_gb

    @property
    def parameters_billion(self) -> float:
        """The parameter count in billions."""
        return self.parameters / 1e9

    def sentence(self) -> str:
        """One line: size, total against the device, whether it fits, and the two big terms."""
        verdict = "it fits" if self.fits else "it does not fit"
        return (
            f"{self.parameters_billion:,.2f}B parameters need {self.total_gb:,.1f} GB on a "
            f"{self.device_gb:,.0f} GB device: {verdict}. Activations take {self.activations_gb:,.1f} GB "
            f"and optimizer state {self.optimizer_gb:,.1f} GB."
        )
