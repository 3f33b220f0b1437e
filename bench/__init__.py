"""Load benchmark for the lab: a protocol-level client, scenarios, and reports (see README.md)."""
