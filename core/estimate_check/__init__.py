"""How close the detailed estimate comes to what PyTorch really kept, term by term, one job a module:

- `setups`: each measured run of `data/measured_memory.csv` read as the detailed estimate's setup
  (same model, number format, optimizer, batch, sequence length, recomputation and attention);
- `causes`: the known causes of a gap, computed from the shapes, so a test can check that they add up;
- `compare`: every estimated term next to the measured bytes, for one run and over all of them;
- `view`: what the Memory page shows of it (labels, table rows, and the figures its sentences read).
"""
