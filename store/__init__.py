"""The learner store: a real database (embedded SQLite, or PostgreSQL by URL) behind one interface.

Pure Python, no Streamlit: `ui.state` is the only caller in the app.
"""

from store.learner_store import Learner, LearnerStore, Refused, Removed, StoreUnavailable

__all__ = ["Learner", "LearnerStore", "Refused", "Removed", "StoreUnavailable"]
