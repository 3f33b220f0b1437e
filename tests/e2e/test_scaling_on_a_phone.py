"""Scaling out on a 390 px phone: every tab of the part strip, Synthesis included, is in view."""

import pytest

pytestmark = pytest.mark.e2e


def test_every_scaling_tab_is_in_view_on_a_phone(learner):
    learner.page.set_viewport_size({"width": 390, "height": 844})
    page = learner.open("scaling")
    tabs = page.get_by_role("tab")
    boxes = {tabs.nth(i).inner_text(): tabs.nth(i).bounding_box() for i in range(tabs.count())}
    assert "Synthesis" in boxes
    strip = page.get_by_role("tablist").first.bounding_box()
    hidden = [
        label
        for label, box in boxes.items()
        if box["x"] < strip["x"] or box["x"] + box["width"] > strip["x"] + strip["width"] + 0.5
    ]
    assert hidden == [], f"tabs outside the {strip['width']:.0f} px strip: {hidden}"
