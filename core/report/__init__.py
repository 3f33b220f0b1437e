"""The learner's report: `contents` builds it from a state snapshot, `figures` holds what other pages
hand it, `markdown` writes it as a document and `moments` writes the times in it."""
