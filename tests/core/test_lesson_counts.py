"""Every count a lesson sentence writes that can reach the thousands carries a thousands separator:
'vocabulary 32,000', '1,000 classes', never '32000' (the app writes counts one way, `core.units`)."""

import string

from core import lessons

# Figures that count things and can pass 999 in some setup a learner can choose or upload.
COUNTS = {"hidden", "intermediate", "vocab", "classes", "seq_len", "global_batch", "parameters", "steps"}


def test_every_count_that_can_reach_the_thousands_is_written_with_a_separator():
    bare = [
        f"{template.source}: {{{name}{':' + spec if spec else ''}}}"
        for template in lessons.all_templates()
        for _, name, spec, _ in string.Formatter().parse(template.text)
        if name in COUNTS and "," not in (spec or "")
    ]
    assert bare == []
