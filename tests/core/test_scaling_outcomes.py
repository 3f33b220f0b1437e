"""The Scaling out contrasts are worked out once per set of settings, and only from those settings."""

from __future__ import annotations

from core.scaling import outcomes
from core.scaling.outcomes import part_contrasts


def test_the_same_settings_give_every_learner_the_one_worked_out_result() -> None:
    first = part_contrasts({"track": "edge", "microbatches": 8})
    # Defaults filled in, keys in another order, and a stored value the contrasts never read.
    same = part_contrasts({"microbatches": 8, "track": "edge", "mode": "strong", "unrelated": "x"})
    assert same is first
    assert first == outcomes._compute(outcomes.current_settings({"track": "edge"}))


def test_another_setting_gives_another_result() -> None:
    cloud, edge = part_contrasts({"track": "cloud"}), part_contrasts({"track": "edge"})
    assert cloud.track.key == "cloud" and edge.track.key == "edge"
    assert part_contrasts({"recompute": "selective"}) != part_contrasts({"recompute": "full"})
