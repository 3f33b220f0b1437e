"""Locked predictions, snapshots, stale evidence and synthesis readiness."""

import dataclasses

import pytest

from core.scaling.evidence import (
    CURRENT,
    MISSING,
    STALE,
    SYNTHESIS_CHOICES,
    changed_upstream,
    current_settings,
    lock_prediction,
    make_snapshot,
    prediction_of,
    saved_synthesis,
    snapshot_status,
    statuses,
    synthesis_readiness,
)
from core.scaling.wording import PARTS

SETTINGS = {"track": "edge", "mode": "strong", "pool": 1, "zero_stage": 2}
DECISIONS = {"A": "strong", "B": "shard", "C": "within", "D": "selected", "E": "strict"}
PREDICTIONS = {"A": "middle", "B": "oom", "C": "within", "D": "faster-oom", "E": "tie"}
GOOD_SYNTHESIS = {
    "plan": "data-parallel",
    "rejected": "fit-first",
    "trigger": "memory",
    "limitation": "contention",
    "rationale": "Weak scaling kept 0.21 efficiency.",
}


def _snapshot(part, settings=SETTINGS):
    return make_snapshot(
        part=part,
        settings=settings,
        prediction=PREDICTIONS[part],
        inputs={},
        baseline={"x": 1},
        result={"x": 2},
        decision=DECISIONS[part],
    )


def _all_current():
    return {part: _snapshot(part) for part in PARTS}


def test_first_prediction_is_locked():
    predictions, accepted = lock_prediction({}, "A", "middle")
    assert accepted and predictions == {"A": "middle"}
    again, accepted = lock_prediction(predictions, "A", "below-half")
    assert not accepted and again == {"A": "middle"}


def test_unknown_part_or_option_is_refused():
    with pytest.raises(ValueError, match="no part"):
        lock_prediction({}, "F", "middle")
    with pytest.raises(ValueError, match="no such prediction"):
        lock_prediction({}, "A", "perfect")


def test_snapshot_needs_a_prediction_and_a_known_decision():
    with pytest.raises(ValueError, match="locked prediction"):
        make_snapshot(
            part="B", settings=SETTINGS, prediction="", inputs={}, baseline={}, result={}, decision="shard"
        )
    with pytest.raises(ValueError, match="no such decision"):
        make_snapshot(
            part="B", settings=SETTINGS, prediction="oom", inputs={}, baseline={}, result={}, decision="maybe"
        )


def test_a_track_change_makes_every_snapshot_stale():
    snapshots = _all_current()
    assert set(statuses(snapshots, SETTINGS).values()) == {CURRENT}
    assert set(statuses(snapshots, SETTINGS | {"track": "cloud"}).values()) == {STALE}


def test_part_a_mode_stales_part_e_and_its_pool_stales_parts_b_and_e():
    snapshots = _all_current()
    after = statuses(snapshots, SETTINGS | {"mode": "weak"})
    assert after == {"A": CURRENT, "B": CURRENT, "C": CURRENT, "D": CURRENT, "E": STALE}
    after = statuses(snapshots, SETTINGS | {"pool": 3})  # part B shards over the pool's nodes
    assert after == {"A": CURRENT, "B": STALE, "C": CURRENT, "D": CURRENT, "E": STALE}


def test_own_inputs_do_not_stale_a_snapshot_and_absent_ones_are_missing():
    assert snapshot_status("B", _all_current(), SETTINGS | {"zero_stage": 3}) == CURRENT
    assert snapshot_status("B", {}, SETTINGS) == MISSING


def test_ready_with_five_current_snapshots_and_a_complete_synthesis():
    assert synthesis_readiness(GOOD_SYNTHESIS, statuses(_all_current(), SETTINGS)).ready


@pytest.mark.parametrize(
    "settings, synthesis, problem",
    [
        (SETTINGS | {"track": "mobile"}, GOOD_SYNTHESIS, {"not_current": ("A", "B", "C", "D", "E")}),
        (SETTINGS | {"mode": "weak"}, GOOD_SYNTHESIS, {"not_current": ("E",)}),
        (SETTINGS, GOOD_SYNTHESIS | {"rejected": "data-parallel"}, {"same_plan": True}),
        (SETTINGS, GOOD_SYNTHESIS | {"trigger": None}, {"unchosen": ("trigger",)}),
        (SETTINGS, GOOD_SYNTHESIS | {"rationale": "   "}, {"no_rationale": True}),
        (SETTINGS, GOOD_SYNTHESIS | {"rationale": "It felt faster."}, {"unquantified": True}),
    ],
)
def test_not_ready_says_what_is_missing(settings, synthesis, problem):
    readiness = synthesis_readiness(synthesis, statuses(_all_current(), settings))
    nothing = {"not_current": (), "unchosen": (), "same_plan": False, "no_rationale": False}
    assert not readiness.ready
    assert dataclasses.asdict(readiness) == nothing | {"unquantified": False} | problem


def test_nothing_done_is_not_ready():
    readiness = synthesis_readiness(None, statuses({}, SETTINGS))
    assert not readiness.ready
    assert (readiness.not_current, readiness.unchosen) == (PARTS, SYNTHESIS_CHOICES)
    assert readiness.no_rationale and not readiness.same_plan and not readiness.unquantified


def test_a_stale_snapshot_says_what_changed():
    snapshots = _all_current()
    assert changed_upstream("E", snapshots, SETTINGS | {"track": "cloud", "pool": 2}) == ("track", "pool")
    assert changed_upstream("B", snapshots, SETTINGS) == ()
    assert changed_upstream("B", {}, SETTINGS) == ()


def test_page_settings_fall_back_to_the_schema_defaults():
    assert current_settings({"track": "cloud"}) == {
        "track": "cloud",
        "mode": "strong",
        "pool": 1,
        "zero_stage": 1,
        "recompute": "full",
        "layout": "cross",
        "micro_batches": 8,
    }


def test_records_from_a_restored_file_are_read_defensively():
    assert prediction_of({"A": "middle"}, "A") == "middle"
    assert prediction_of({"A": "perfect"}, "A") is None and prediction_of(["A"], "A") is None
    broken = {"B": _snapshot("B") | {"decision": "maybe"}, "C": "not a snapshot"}
    assert statuses(broken, SETTINGS) == {part: MISSING for part in PARTS}
    assert saved_synthesis({"plan": "fit-first", "trigger": "nope", "rationale": 3}) == {"plan": "fit-first"}
    assert saved_synthesis("text") == {}
