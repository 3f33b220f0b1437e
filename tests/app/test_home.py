"""Home: the progress it shows says what each figure counts."""

from core import lessons
from tests.app.conftest import FOUR_RUNS_SORTED, answer, open_page


def test_scores_count_right_answers_and_the_parts_table_counts_answers_under_other_names():
    at = open_page("pages/four_runs.py")
    wrong = {"r1": "speed"}  # one run sorted wrongly: four answered, three right
    for question_id, option_id in {**FOUR_RUNS_SORTED, **wrong}.items():
        answer(at, question_id, option_id)
    open_page("pages/home.py", at=at)
    tiles = {m.label: m.value for m in at.main.metric}
    assert tiles[lessons.sentence("frame", "checks_right")] == "3/9"
    parts = at.table[0].value
    four_runs = parts[parts["Part"] == "Four runs"].iloc[0]
    assert four_runs[lessons.sentence("home", "answered")] == "4/4"
    # No tile shares a name with a column: "Four runs 4/4" and "Checks 3/9" never read as one count.
    assert not set(tiles) & set(parts.columns)
    assert all(label.endswith(" right") for label in tiles)
    assert all(m.label.endswith(" right") for m in at.sidebar.metric)
