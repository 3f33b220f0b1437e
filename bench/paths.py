"""Where things are: the repository, the benchmark's results folder, Streamlit's hello demo."""

from pathlib import Path

import streamlit

REPO_ROOT = Path(__file__).resolve().parent.parent
RESULTS_DIR = REPO_ROOT / "bench" / "results"
HELLO_SCRIPT = Path(streamlit.__file__).parent / "hello" / "streamlit_app.py"
