"""What the tests and the benchmarks share: a protocol client, a server launcher, a throwaway PostgreSQL.

`load_client.Session` is one browser tab speaking Streamlit's protocol, `page_model.PageModel` what
that tab knows of the page, `isolation` the markers that show one session never sees another's
values; `server.StreamlitServer` starts `streamlit run` on a free loopback port, and `postgres`
starts a PostgreSQL server that is removed afterwards.
"""
