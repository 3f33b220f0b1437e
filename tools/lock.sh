#!/usr/bin/env bash
# Regenerate the hashed lock files from the top-level requirements files:
#   requirements.lock      <- requirements.txt      (what a workshop host installs)
#   requirements-dev.lock  <- requirements-dev.txt  (what CI installs: runtime, torch, bench, test tools)
# Run it after changing any requirements*.txt, and commit the lock files with that change.
#
# The locks are resolved for CPython 3.11 on x86-64 Linux, the platform CI runs on. PyTorch is locked
# to its CPU build (torch==X+cpu), which this project's machines keep in /opt/wheels; PyPI's Linux
# wheels of torch are the CUDA build and pull several GB of nvidia-* packages the tests never use.
# Elsewhere, install the dev lock with PyTorch's CPU index added:
#   pip install --require-hashes -r requirements-dev.lock --extra-index-url https://download.pytorch.org/whl/cpu
set -euo pipefail
cd "$(dirname "$0")/.."
command -v uv >/dev/null || { echo "tools/lock.sh needs uv: pip install uv==0.13.8" >&2; exit 1; }
wheels=()
[ -d /opt/wheels ] && wheels=(--find-links /opt/wheels)
for name in requirements requirements-dev; do
    uv pip compile --quiet --generate-hashes --no-header \
        --python-version 3.11 --python-platform x86_64-manylinux_2_28 "${wheels[@]}" \
        --output-file "$name.lock" "$name.txt"
done
if ! grep -q '^torch==.*+cpu ' requirements-dev.lock; then
    echo "requirements-dev.lock did not get PyTorch's CPU build; see the comment at the top of tools/lock.sh" >&2
    exit 1
fi
echo "wrote requirements.lock and requirements-dev.lock"
