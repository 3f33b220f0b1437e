#!/usr/bin/env bash
# Start a workshop on this machine: N Streamlit replicas on free loopback ports behind HAProxy
# (Debian's package; deploy/proxy.sh) with HTTPS, cookie affinity and the limits in
# deploy/haproxy.cfg.
#
#   bash deploy/start.sh                     # 3 replicas, HTTPS on :8443, HTTP :8080 redirects
#   REPLICAS=4 LAB_ADDRESS=0.0.0.0 LAB_PORT=443 LAB_HTTP_PORT=80 LAB_HOST=lab.example.org \
#       LAB_CERT=/etc/ssl/private/lab.pem bash deploy/start.sh
#
# Environment: REPLICAS, LAB_HOST (the name learners type: it goes into server.allowedHosts
# and the certificate), PYTHON, and everything deploy/proxy.sh reads. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS="${REPLICAS:-3}"
LAB_HOST="${LAB_HOST:-localhost}"
PYTHON="${PYTHON:-python3}"
RUN="${LAB_RUN_DIR:-deploy/run}"
mkdir -p "$RUN"

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

replicas=()
for i in $(seq 1 "$REPLICAS"); do
    port=$(free_port)
    # Replicas listen on loopback only; learners reach them through HAProxy. allowedHosts refuses
    # a websocket whose Host header names another site (DNS rebinding). serve.py is Home.py with
    # the per-process caches warmed before the replica answers its health check. HAProxy, on this
    # host, names each learner's address in X-Forwarded-For: the message cap counts by it.
    LAB_TRUSTED_PROXIES=127.0.0.1 "$PYTHON" -m streamlit run serve.py \
        --server.address 127.0.0.1 --server.port "$port" --server.headless true \
        --server.allowedHosts "$LAB_HOST" --server.allowedHosts 127.0.0.1 \
        >"$RUN/app$i.log" 2>&1 &
    pids+=($!)
    replicas+=("127.0.0.1:$port")
done

# HAProxy starts once every replica answers its health check, so no learner meets a 503.
for replica in "${replicas[@]}"; do
    for _ in $(seq 1 120); do
        "$PYTHON" -c "import urllib.request; urllib.request.urlopen('http://$replica/_stcore/health', timeout=1)" \
            2>/dev/null && break
        sleep 0.5
    done
done

LAB_HOST="$LAB_HOST" bash deploy/proxy.sh "${replicas[@]}" &
pids+=($!)
echo "Workshop: https://$LAB_HOST:${LAB_PORT:-8443}/ ($REPLICAS replicas; logs in $RUN/)"
wait -n
