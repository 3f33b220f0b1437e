#!/usr/bin/env bash
# Run HAProxy with deploy/haproxy.cfg in front of the replicas given as arguments (host:port).
#
#   bash deploy/proxy.sh 127.0.0.1:8501 127.0.0.1:8502
#
# Environment: LAB_ADDRESS (default 127.0.0.1), LAB_PORT (HTTPS, default 8443), LAB_HTTP_PORT
# (redirects to HTTPS, default 8080), LAB_HOST (the certificate's name, default localhost),
# LAB_CERT (a PEM with certificate and key; otherwise a self-signed one is made in the run
# folder, never committed), LAB_RUN_DIR (where the assembled config and certificate go,
# default deploy/run, which git ignores). Runs in the foreground until stopped.
set -euo pipefail
cd "$(dirname "$0")/.."
[ "$#" -ge 1 ] || { echo "usage: $0 host:port [host:port ...]" >&2; exit 2; }

LAB_ADDRESS="${LAB_ADDRESS:-127.0.0.1}"
LAB_PORT="${LAB_PORT:-8443}"
LAB_HTTP_PORT="${LAB_HTTP_PORT:-8080}"
LAB_HOST="${LAB_HOST:-localhost}"
RUN="${LAB_RUN_DIR:-deploy/run}"
mkdir -p "$RUN"

if [ -z "${LAB_CERT:-}" ]; then
    LAB_CERT="$RUN/self-signed.pem"
    if [ ! -s "$LAB_CERT" ]; then
        # Self-signed, for a trial or a closed room; browsers warn.
        openssl req -x509 -newkey rsa:2048 -nodes -days 30 -subj "/CN=$LAB_HOST" \
            -addext "subjectAltName=DNS:$LAB_HOST,IP:127.0.0.1" \
            -keyout "$RUN/self-signed.key" -out "$RUN/self-signed.crt" 2>/dev/null
        cat "$RUN/self-signed.crt" "$RUN/self-signed.key" >"$LAB_CERT"
        chmod 600 "$LAB_CERT" "$RUN/self-signed.key"
    fi
fi

# The backend is the last section of haproxy.cfg, so server lines appended to it belong to it.
cp deploy/haproxy.cfg "$RUN/haproxy.cfg"
i=0
for replica in "$@"; do
    i=$((i + 1))
    echo "    server app$i $replica cookie app$i" >>"$RUN/haproxy.cfg"
done

export LAB_BIND="$LAB_ADDRESS:$LAB_PORT" LAB_HTTP_BIND="$LAB_ADDRESS:$LAB_HTTP_PORT" LAB_PORT LAB_CERT
haproxy -c -q -f "$RUN/haproxy.cfg"
exec haproxy -db -f "$RUN/haproxy.cfg"
