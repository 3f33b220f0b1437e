"""What changes Streamlit's server: guards and fixes installed once per process (server_hooks)."""
