"""What other pages hand the report: the layer and the memory budget the learner left, as figures."""

from __future__ import annotations

from dataclasses import dataclass

from core import lessons
from core.units import flops_label, indefinite_article


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
        return lessons.sentence(
            "quiz_report",
            "layer",
            n_in=self.n_in,
            m_out=self.m_out,
            batch=self.batch,
            flops=flops_label(self.flops),
            article=indefinite_article(self.n_in).capitalize(),
        )


@dataclass(frozen=True)
class BudgetFigures:
    """The training-memory budget the learner left on the memory page (decimal GB)."""

    parameters: float
    total_gb: float
    device_gb: float
    activations_gb: float
    optimizer_gb: float
    device_label: str  # as the memory page names it: "24 GiB (25.77 GB) device"

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
        figures = {
            "parameters_billion": self.parameters_billion,
            "total_gb": self.total_gb,
            "device": self.device_label,
            "activations_gb": self.activations_gb,
            "optimizer_gb": self.optimizer_gb,
        }
        if self.fits:
            return lessons.sentence("quiz_report", "budget_fits", **figures)
        return lessons.sentence("quiz_report", "budget_does_not_fit", **figures)
