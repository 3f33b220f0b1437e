"""Run A is one run: Home, Four runs, the Run A page and the report show the same computed figures."""

from core.run_a import brief_figures, brief_sentence, run_a_timeline
from core.telemetry import recorded
from tests.app.conftest import open_page, sort_four_runs


def _texts(at) -> str:
    return "\n".join([m.value for m in at.markdown] + [c.value for c in at.caption])


def test_the_same_run_a_figures_on_every_page_and_in_the_report() -> None:
    brief = brief_figures()
    weights, device, other = (
        f"{brief.weights_gb:.2f} GB",
        f"{brief.device_gb:.2f} GB",
        f"{brief.other_gb:.2f} GB",
    )

    # The figures, not the sentences around them: 7.89 GB of weights, 25.77 GB device, 17.88 GB unexplained.
    home = _texts(open_page("pages/home.py"))
    assert all(figure in home for figure in (weights, device, other))

    run_a = _texts(open_page("pages/run_a.py"))
    assert all(figure in run_a for figure in (weights, device, other, f"{brief.forward_peak_gb:.2f} GB"))

    four_runs = sort_four_runs(open_page("pages/four_runs.py"))
    assert brief_sentence() in _texts(four_runs)
    telemetry = recorded("A")
    assert telemetry.frame["memory_gb"].iloc[0] == run_a_timeline().points[0].total_gb
    assert telemetry.failure_label == "out of memory in backward"

    report = open_page("pages/quiz_report.py")
    assert not report.exception
    assert brief_sentence() in _texts(report)
