"""Altair chart builders: functions that return a chart; no Streamlit."""
