"""Run A's first experiments by id, and the pairs of them the page combines."""

from __future__ import annotations

from core.datafiles import require

# The four first experiments offered for Run A, by the id the Run A page stores (the report and the
# room read them too).
FIRST_EXPERIMENTS = {
    "batch": "Halve the tokens per step (batch × sequence) and run it again",
    "optim": "Swap Adam for SGD to drop the optimizer state",
    "gpu": "Move the run to a bigger GPU",
    "model": "Shrink the model until it fits",
}

EXPERIMENTS = tuple(FIRST_EXPERIMENTS)  # batch, optim, gpu, model
# Each experiment in a few lower-case words, to name it in a chart title or a pair.
SHORT_NAMES = {
    "batch": "half the tokens",
    "optim": "SGD instead of Adam",
    "gpu": "the bigger device",
    "model": "a smaller model",
}
PAIR_SEPARATOR = "+"  # "batch+optim": two experiments applied together, as the settings name them


def check_experiment(experiment: str) -> None:
    """A ValueError naming the choices unless `experiment` is one of the first experiments."""
    require(
        experiment in EXPERIMENTS, f"Unknown experiment {experiment!r}: pick one of {', '.join(EXPERIMENTS)}."
    )


def pairs() -> tuple[str, ...]:
    """Every two different first experiments, as the settings name them ("batch+optim"), in list order."""
    return tuple(
        f"{first}{PAIR_SEPARATOR}{second}"
        for i, first in enumerate(EXPERIMENTS)
        for second in EXPERIMENTS[i + 1 :]
    )


def pair_experiments(pair: str) -> tuple[str, str]:
    """The two experiments of a pair id, in the order they are applied (the list's order)."""
    require(pair in pairs(), f"Unknown pair of experiments {pair!r}: pick one of {', '.join(pairs())}.")
    first, second = pair.split(PAIR_SEPARATOR)
    return first, second
