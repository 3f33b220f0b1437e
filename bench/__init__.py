"""Load benchmarks for the lab: the load runner and its scenarios, comparisons, reports (see README.md)."""
