"""Pure lesson logic: arithmetic, question banks, grading, scenarios. No Streamlit here."""
