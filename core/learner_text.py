"""Limits on what a learner writes, shared by every form and by the progress file."""

MAX_CHARS = 2_000  # a few paragraphs; forms cut input here and imports refuse longer text
