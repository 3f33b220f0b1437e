#!/usr/bin/env bash
# Full, LoRA and QLoRA training steps measured on a lent CUDA GPU in one call: four models at two shapes
# each (python -m tools.measure_gpu --plan finetune), written under $OUT with the versions that ran.
# The GPU image holds torch, transformers and peft but not bitsandbytes: carry the wheels of
# requirements-torch.txt's bitsandbytes and peft in .whl/ (docs: "Measuring on a GPU"). Without
# bitsandbytes the QLoRA and AdamW8bit rows fail one line each and the others are still measured.
set -uo pipefail
out="${OUT:-test-artifacts/gpu}"
mkdir -p "$out"
if compgen -G ".whl/*.whl" >/dev/null; then
  python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade \
    --target /tmp/site .whl/*.whl || exit 1
  export PYTHONPATH="/tmp/site${PYTHONPATH:+:$PYTHONPATH}"
fi
export PYTHONUNBUFFERED=1 HF_HUB_OFFLINE=1  # every model is built from a committed config.json
{
  nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader
  python3 -c 'import torch, transformers, peft; print(torch.__version__, transformers.__version__, peft.__version__)'
  python3 -c 'import bitsandbytes; print("bitsandbytes", bitsandbytes.__version__)'
} >"$out/versions.txt" 2>&1
# Leave a minute of the call for the files to come back; rows already measured are on disk by then.
timeout 420 python3 -m tools.measure_gpu --plan finetune --output "$out/finetune.csv" 2>&1 | tee "$out/log.txt"
