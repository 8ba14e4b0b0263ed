#!/usr/bin/env python3
"""CPU speed and memory of the recommended code models' architectures, without downloading them.

A transformer's speed does not depend on the values of its weights, only on their shapes and
dtype, so this builds each model from its published ``config.json`` (the shapes below) with
random weights, loaded as ``luaguard complete`` loads a model on CPU (float32), and times
luaguard's own decoding loop (``generate_ids``, unguarded: the model's share) on a prompt of
``--prompt`` tokens of the sample place, ``--tokens`` new tokens.  It prints the prefill time,
the decoding speed (tokens/s after the first) and the process's peak memory (RSS).

Shapes (``config.json`` of each Hugging Face repository: hidden size, layers, attention heads,
key/value heads, MLP size, vocabulary, tied embeddings):

* ``Qwen/Qwen2.5-Coder-0.5B``: 896, 24, 14, 2, 4864, 151936, tied
* ``Qwen/Qwen2.5-Coder-1.5B``: 1536, 28, 12, 2, 8960, 151936, tied
* ``Qwen/Qwen2.5-Coder-3B``:   2048, 36, 16, 2, 11008, 151936, tied

Run (one architecture per process, so the peak memory is its own)::

    nice .venv/bin/python bench/model_speed.py --arch qwen2.5-coder-0.5b
    nice .venv/bin/python bench/model_speed.py --arch qwen2.5-coder-1.5b --threads 2

Figures are for the machine it runs on; the README quotes the ones measured on the project's
2-core machine (shared with other jobs: treat them as a lower bound).
"""

from __future__ import annotations

import argparse
import resource
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "server"))

ARCHS = {
    "qwen2.5-coder-0.5b": dict(hidden_size=896, num_hidden_layers=24, num_attention_heads=14, num_key_value_heads=2,
                               intermediate_size=4864, vocab_size=151936, tie_word_embeddings=True),
    "qwen2.5-coder-1.5b": dict(hidden_size=1536, num_hidden_layers=28, num_attention_heads=12, num_key_value_heads=2,
                               intermediate_size=8960, vocab_size=151936, tie_word_embeddings=True),
    "qwen2.5-coder-3b": dict(hidden_size=2048, num_hidden_layers=36, num_attention_heads=16, num_key_value_heads=2,
                             intermediate_size=11008, vocab_size=151936, tie_word_embeddings=True),
}


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--arch", choices=sorted(ARCHS), required=True)
    ap.add_argument("--prompt", type=int, default=256, help="prompt tokens (default 256)")
    ap.add_argument("--tokens", type=int, default=32, help="new tokens (default 32)")
    ap.add_argument("--threads", type=int, default=2, help="torch threads (default 2)")
    args = ap.parse_args()

    import torch
    from transformers import Qwen2Config, Qwen2ForCausalLM

    from luaguard.completion.generate import generate_ids

    torch.manual_seed(0)
    torch.set_num_threads(args.threads)
    t0 = time.perf_counter()
    config = Qwen2Config(max_position_embeddings=32768, rope_theta=1e6, **ARCHS[args.arch])
    with torch.no_grad():
        model = Qwen2ForCausalLM(config).float().eval()
    built = time.perf_counter() - t0
    params = sum(p.numel() for p in model.parameters())
    prompt = [int(i) for i in torch.randint(0, 151643, (args.prompt,))]
    generate_ids(model, prompt[:16], max_new_tokens=2, eos_ids=[])  # warm-up (kernels, allocator)
    phases: dict[str, float] = {}
    t0 = time.perf_counter()
    res = generate_ids(model, prompt, max_new_tokens=args.tokens, eos_ids=[], phases=phases)
    total = time.perf_counter() - t0
    decode = phases.get("forward", 0.0)
    steps = len(res.ids) - 1
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024 / 1024
    print(f"{args.arch}: {params / 1e9:.2f}B parameters, float32 on CPU, {args.threads} torch threads "
          f"(built in {built:.0f} s)")
    print(f"  prefill of {args.prompt} tokens: {phases.get('prefill', 0.0) * 1000:.0f} ms")
    print(f"  decoding: {steps / decode:.1f} tokens/s ({decode / steps * 1000:.0f} ms a token, {steps} tokens)")
    print(f"  {len(res.ids)} tokens in {total:.1f} s all told; peak memory (RSS) {rss:.1f} GB")
    return 0


if __name__ == "__main__":
    sys.exit(main())
