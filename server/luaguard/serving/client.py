"""Guarded completions from a shared server: the language server's ``completion.endpoint``.

With ``completion.endpoint`` set (an OpenAI-compatible base URL such as
``http://gpu-box:8000/v1``), the language server does not load a model: it posts each
completion to ``{endpoint}/completions`` with the luaguard keys in ``vllm_xargs`` (the vLLM
server guards it with :mod:`luaguard.serving.vllm`)::

    {"model": <completion.endpointModel>, "prompt": <text before the cursor>, "max_tokens": ...,
     "temperature": 0, "logprobs": 1,
     "vllm_xargs": {"luaguard": true, "luaguard_project": <completion.endpointProject>,
                    "luaguard_file": <the file, project-relative>}}

The answer becomes the :class:`~luaguard.guard.completion_types.Completion` a local model gives
(confidence from the returned log-probabilities; withheld under ``min_confidence``).  Errors
(unreachable server, HTTP 4xx/5xx, a malformed answer) raise :class:`EndpointError` with the
server's message; the language server shows it once.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

from ..guard.completion_types import Completion

#: the prompt sent is at most this many characters before the cursor
MAX_PROMPT_CHARS = 6000


class EndpointError(RuntimeError):
    """The completion server could not answer (``str()`` says which URL and why)."""


class RemoteCompletionEngine:
    """Drop-in for :class:`~luaguard.guard.generate.CompletionEngine` that asks a server.

    ``settings``: :class:`~luaguard.config.CompletionSettings` (``endpoint``,
    ``endpoint_model``, ``endpoint_project``, ``max_tokens``, ``timeout_ms``,
    ``min_confidence``); ``root``: the project root (to make the file path relative)."""

    is_loaded = True

    def __init__(self, settings, root: Path | None = None, *, opener: Callable | None = None) -> None:
        self.settings = settings
        self.root = root
        self._open = opener or urllib.request.urlopen

    def load(self) -> None:  # the model lives on the server
        return None

    def warm(self, *args: Any, **kwargs: Any) -> None:
        return None

    def _rel(self, path: str | None) -> str | None:
        if not path:
            return None
        p = Path(path)
        if self.root is not None and p.is_absolute():
            try:
                return p.relative_to(self.root).as_posix()
            except ValueError:
                return None
        return p.as_posix() if not p.is_absolute() else None

    def complete(self, request, contract=None, cancelled=None):
        """Post ``request`` (a :class:`~luaguard.guard.completion_types.CompletionRequest`);
        returns a :class:`~luaguard.guard.completion_types.Completion`.  Raises
        :class:`EndpointError`."""
        s = self.settings
        t0 = time.perf_counter()
        prompt = request.text[max(0, request.offset - MAX_PROMPT_CHARS): request.offset]
        xargs: dict[str, Any] = {"luaguard": True}
        if s.endpoint_project:
            xargs["luaguard_project"] = s.endpoint_project
        rel = self._rel(request.path)
        if rel:
            xargs["luaguard_file"] = rel
        if request.guard is False or not s.guard or not s.endpoint_project:
            xargs = {}
        body = {"model": s.endpoint_model or "", "prompt": prompt,
                "max_tokens": request.max_tokens or s.max_tokens, "temperature": request.temperature,
                "top_p": request.top_p, "logprobs": 1}
        if xargs:
            body["vllm_xargs"] = xargs
        url = s.endpoint.rstrip("/") + "/completions"
        timeout = (request.timeout_ms or s.timeout_ms) / 1000.0
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        try:
            with self._open(req, timeout=timeout) as r:
                answer = json.loads(r.read())
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode("utf-8", "replace") if exc.fp is not None else ""
            raise EndpointError(f"{url}: HTTP {exc.code}: {_message(detail)}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise EndpointError(f"{url}: {getattr(exc, 'reason', exc)}") from None
        except (json.JSONDecodeError, UnicodeDecodeError):
            raise EndpointError(f"{url}: the answer is not JSON") from None
        try:
            choice = answer["choices"][0]
            text = choice["text"]
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"{url}: the answer has no choices[0].text") from None
        if not isinstance(text, str):
            raise EndpointError(f"{url}: choices[0].text is not a string")
        lps = ((choice.get("logprobs") or {}).get("token_logprobs") or []) if isinstance(choice, dict) else []
        probs = [math.exp(x) for x in lps if isinstance(x, (int, float))]
        mean = sum(probs) / len(probs) if probs else 1.0
        low = min(probs) if probs else 1.0
        min_conf = request.min_confidence if request.min_confidence is not None else s.min_confidence
        usage = answer.get("usage") or {}
        return Completion(text=text if mean >= min_conf else "", raw_text=text, tokens=len(probs) or usage.get("completion_tokens", 0),
                          mean_prob=mean, min_prob=low, withheld=mean < min_conf,
                          stop_reason=str(choice.get("finish_reason") or "stop"), guarded=bool(xargs),
                          truncated_prompt=request.offset > MAX_PROMPT_CHARS,
                          prompt_tokens=int(usage.get("prompt_tokens", 0) or 0),
                          elapsed_ms=(time.perf_counter() - t0) * 1e3)


def _message(detail: str) -> str:
    try:
        got = json.loads(detail)
        msg = got.get("error", {}).get("message") if isinstance(got.get("error"), dict) else got.get("message")
        return str(msg or detail)
    except (json.JSONDecodeError, AttributeError):
        return detail or "(no body)"
