"""Guarded completions on a serving engine.  :mod:`.registry` (projects by name, request keys)
needs nothing extra; :mod:`.vllm` is vLLM's logits processor and imports vLLM."""
