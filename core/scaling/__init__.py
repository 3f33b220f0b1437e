"""The Scaling out lab: when more accelerators stop helping, computed from stated formulas."""
