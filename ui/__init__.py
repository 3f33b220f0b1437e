"""Streamlit-only helpers: session-state access, the marked-question widget, the shared frame."""
