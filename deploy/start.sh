#!/usr/bin/env bash
# Start a workshop on this machine: N Streamlit replicas on free loopback ports behind HAProxy
# (Debian's package) with HTTPS, cookie affinity and the limits in deploy/haproxy.cfg.
#
#   bash deploy/start.sh                     # 3 replicas, HTTPS on :8443, HTTP :8080 redirects
#   REPLICAS=4 LAB_PORT=443 LAB_HTTP_PORT=80 LAB_HOST=lab.example.org bash deploy/start.sh
#
# Environment: REPLICAS, LAB_ADDRESS (where HAProxy listens, default 127.0.0.1), LAB_PORT,
# LAB_HTTP_PORT, LAB_HOST (the name learners type; goes into server.allowedHosts and the
# certificate), LAB_CERT (an existing PEM with certificate and key; otherwise a self-signed one
# is made under deploy/run/, which git ignores), PYTHON. Ctrl-C stops everything.
set -euo pipefail
cd "$(dirname "$0")/.."

REPLICAS="${REPLICAS:-3}"
LAB_ADDRESS="${LAB_ADDRESS:-127.0.0.1}"
LAB_PORT="${LAB_PORT:-8443}"
LAB_HTTP_PORT="${LAB_HTTP_PORT:-8080}"
LAB_HOST="${LAB_HOST:-localhost}"
PYTHON="${PYTHON:-python3}"
RUN=deploy/run
mkdir -p "$RUN"

if [ -z "${LAB_CERT:-}" ]; then
    LAB_CERT="$RUN/self-signed.pem"
    if [ ! -s "$LAB_CERT" ]; then
        # Self-signed, for a trial or a closed room; browsers warn. Never committed.
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$LAB_HOST" \
            -addext "subjectAltName=DNS:$LAB_HOST,IP:127.0.0.1" \
            -keyout "$RUN/self-signed.key" -out "$RUN/self-signed.crt" 2>/dev/null
        cat "$RUN/self-signed.crt" "$RUN/self-signed.key" >"$LAB_CERT"
        chmod 600 "$LAB_CERT" "$RUN/self-signed.key"
    fi
fi

free_port() {
    "$PYTHON" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

pids=()
stop() {
    for pid in "${pids[@]}"; do kill "$pid" 2>/dev/null || true; done
    wait 2>/dev/null || true
}
trap stop EXIT INT TERM

cp deploy/haproxy.cfg "$RUN/haproxy.cfg"
for i in $(seq 1 "$REPLICAS"); do
    port=$(free_port)
    # Replicas listen on loopback only; learners reach them through HAProxy. allowedHosts refuses
    # a websocket whose Host header names another site (DNS rebinding).
    "$PYTHON" -m streamlit run Home.py --server.address 127.0.0.1 --server.port "$port" \
        --server.headless true --server.allowedHosts "$LAB_HOST" --server.allowedHosts "127.0.0.1" \
        >"$RUN/app$i.log" 2>&1 &
    pids+=($!)
    echo "    server app$i 127.0.0.1:$port cookie app$i" >>"$RUN/haproxy.cfg"
done

# HAProxy starts once every replica answers its health check, so no learner meets a 503.
for line in $(grep -o '127.0.0.1:[0-9]*' "$RUN/haproxy.cfg"); do
    for _ in $(seq 1 120); do
        "$PYTHON" -c "import sys, urllib.request; urllib.request.urlopen('http://$line/_stcore/health', timeout=1)" \
            2>/dev/null && break
        sleep 0.5
    done
done

export LAB_BIND="$LAB_ADDRESS:$LAB_PORT" LAB_HTTP_BIND="$LAB_ADDRESS:$LAB_HTTP_PORT" LAB_PORT LAB_CERT
haproxy -c -q -f "$RUN/haproxy.cfg"
haproxy -db -f "$RUN/haproxy.cfg" &
pids+=($!)
echo "Workshop: https://$LAB_HOST:$LAB_PORT/ ($REPLICAS replicas; logs in $RUN/)"
wait -n
