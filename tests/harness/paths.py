"""Where things are: the repository and Streamlit's hello demo."""

from pathlib import Path

import streamlit

REPO_ROOT = Path(__file__).resolve().parent.parent.parent
HELLO_SCRIPT = Path(streamlit.__file__).parent / "hello" / "streamlit_app.py"
