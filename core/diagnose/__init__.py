"""Diagnosing a learner's own training log: read it, map its columns, run one detector per failure kind.

`formats` reads the file, `columns` recognises what each column measures, `detectors` decides,
`diagnosis` puts the verdicts together; `python -m core.diagnose LOG` is the command line.
"""
