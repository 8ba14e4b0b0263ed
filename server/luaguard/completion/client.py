"""Guarded completions from a shared server: the language server's ``completion.endpoint``.

With ``completion.endpoint`` set (an OpenAI-compatible base URL such as
``http://gpu-box:8000/v1``), the language server does not load a model: it posts each
completion to ``{endpoint}/completions`` with the luaguard keys in ``vllm_xargs`` (the vLLM
server guards it with :mod:`luaguard.serving.vllm`)::

    {"model": <completion.endpointModel>, "prompt": <text before the cursor>, "max_tokens": ...,
     "temperature": 0, "logprobs": 1,
     "truncate_prompt_tokens": <the model's context less max_tokens>, "truncation_side": "left",
     "vllm_xargs": {"luaguard": true, "luaguard_project": <completion.endpointProject>,
                    "luaguard_file": <the file, project-relative>}}

The luaguard keys are sent only when the guard is on and ``completion.endpointProject``
names the project; otherwise the request is not guarded, and the answer says so
(``Completion.guarded``: the editor labels it "not guarded").

**Prompt length** is counted in the model's tokens, by the server: the model's context
(``max_model_len`` of ``GET {endpoint}/models``, asked once) less ``max_tokens`` goes out as
``truncate_prompt_tokens`` and vLLM keeps that many tokens from the end of the prompt.  The
text sent is cut to :data:`CHARS_PER_TOKEN` characters per token of that budget first (only
to bound the request's size).  Where the server does not report its context, the text is cut
to :data:`MAX_PROMPT_CHARS` characters as before.

**Confidence** comes from the returned log-probabilities of the chosen tokens.  vLLM computes
them before logits processors unless the server runs with ``--logprobs-mode
processed_logprobs`` (see the README's serving section): only then are they the guarded
distribution's, as a local model's confidence is.

The answer becomes the :class:`~luaguard.completion.requests.Completion` a local model gives
(withheld under ``min_confidence``).  Errors (unreachable server, HTTP 4xx/5xx, a malformed
answer) raise :class:`EndpointError` with the server's message; the language server shows it
once.
"""

from __future__ import annotations

import json
import math
import time
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any, Callable

from .requests import Completion

#: without the server's context length: the prompt sent is at most this many characters
MAX_PROMPT_CHARS = 6000
#: characters sent per token of the prompt budget (a bound on the request's size; the server
#: cuts the prompt to the budget in tokens)
CHARS_PER_TOKEN = 16
#: whatever context the server reports, at most this many characters of the file are sent
MAX_SENT_CHARS = 64 * 1024
#: an answer (``/completions`` or ``/models``) larger than this many bytes is refused
MAX_ANSWER_BYTES = 1024 * 1024
#: seconds ``GET /models`` may take in all
MODELS_TIMEOUT_S = 5.0


def read_capped(response, *, limit: int = MAX_ANSWER_BYTES, deadline: float, url: str) -> bytes:
    """The body of an HTTP ``response`` (an ``http.client.HTTPResponse``), read in pieces:
    at most ``limit`` bytes, and by ``deadline`` (``time.monotonic()`` seconds) - the
    socket's own time-out bounds each read only, so a server sending a byte a second would
    otherwise never time out.  Raises :class:`EndpointError`."""
    declared = response.headers.get("Content-Length") if getattr(response, "headers", None) is not None else None
    if declared is not None and declared.strip().isdigit() and int(declared) > limit:
        raise EndpointError(f"{url}: the answer is larger than {limit:,} bytes ({int(declared):,}); not read")
    chunks: list[bytes] = []
    total = 0
    while True:
        if time.monotonic() > deadline:
            raise EndpointError(f"{url}: no complete answer in time")
        chunk = response.read1(16384) if hasattr(response, "read1") else response.read(16384)
        if not chunk:
            return b"".join(chunks)
        total += len(chunk)
        if total > limit:
            raise EndpointError(f"{url}: the answer is larger than {limit:,} bytes; not read")
        chunks.append(chunk)


class EndpointError(RuntimeError):
    """The completion server could not answer (``str()`` says which URL and why)."""


class RemoteCompletionEngine:
    """Drop-in for :class:`~luaguard.completion.generate.CompletionEngine` that asks a server.

    ``settings``: :class:`~luaguard.config.CompletionSettings` (``endpoint``,
    ``endpoint_model``, ``endpoint_project``, ``max_tokens``, ``timeout_ms``,
    ``min_confidence``); ``root``: the project root (to make the file path relative)."""

    is_loaded = True

    def __init__(self, settings, root: Path | None = None, *, opener: Callable | None = None) -> None:
        self.settings = settings
        self.root = root
        self._open = opener or urllib.request.urlopen
        self._context: dict[tuple[str, str], int | None] = {}

    def context_length(self, timeout: float = 5.0) -> int | None:
        """The served model's context in tokens (``max_model_len`` of ``GET {endpoint}/models``
        for ``endpoint_model``, else the first model listed), asked once per endpoint and
        model; ``None`` when the server does not say (or cannot be asked: tried again later)."""
        s = self.settings
        key = (s.endpoint or "", s.endpoint_model or "")
        if key in self._context:
            return self._context[key]
        url = s.endpoint.rstrip("/") + "/models"
        timeout = min(timeout, MODELS_TIMEOUT_S)
        try:
            with self._open(urllib.request.Request(url), timeout=timeout) as r:
                models = json.loads(read_capped(r, deadline=time.monotonic() + timeout, url=url)).get("data") or []
        except (urllib.error.URLError, OSError, TimeoutError, ValueError, AttributeError, EndpointError, RecursionError):
            return None
        got = None
        for card in models:
            if isinstance(card, dict) and (not s.endpoint_model or card.get("id") == s.endpoint_model):
                n = card.get("max_model_len")
                got = int(n) if isinstance(n, int) and n > 0 else None
                break
        self._context[key] = got
        return got

    def load(self) -> None:  # the model lives on the server
        return None

    def warm(self, *args: Any, **kwargs: Any) -> None:
        return None

    def _rel(self, path: str | None) -> str | None:
        """The project-relative ``luaguard_file`` of ``path`` (absolute, or relative to the
        root: :func:`~luaguard.engine.project_relpath`); ``None`` outside the root."""
        if not path:
            return None
        if self.root is None:
            p = Path(path)
            return p.as_posix() if not p.is_absolute() else None
        from ..engine import project_relpath

        return project_relpath(self.root, path)

    def complete(self, request, contract=None, cancelled=None):
        """Post ``request`` (a :class:`~luaguard.completion.requests.CompletionRequest`);
        returns a :class:`~luaguard.completion.requests.Completion`.  Raises
        :class:`EndpointError`."""
        s = self.settings
        t0 = time.perf_counter()
        max_tokens = request.max_tokens or s.max_tokens
        timeout = (request.timeout_ms or s.timeout_ms) / 1000.0
        context = self.context_length(timeout)
        budget = context - max_tokens if context is not None and context > max_tokens else None
        chars = min(budget * CHARS_PER_TOKEN, MAX_SENT_CHARS) if budget is not None else MAX_PROMPT_CHARS
        prompt = request.text[max(0, request.offset - chars): request.offset]
        xargs: dict[str, Any] = {"luaguard": True}
        if s.endpoint_project:
            xargs["luaguard_project"] = s.endpoint_project
        rel = self._rel(request.path)
        if rel:
            xargs["luaguard_file"] = rel
        if request.guard is False or not s.guard or not s.endpoint_project:
            xargs = {}
        body = {"model": s.endpoint_model or "", "prompt": prompt, "max_tokens": max_tokens,
                "temperature": request.temperature, "top_p": request.top_p, "logprobs": 1}
        if budget is not None:
            body["truncate_prompt_tokens"] = budget
            body["truncation_side"] = "left"
        if xargs:
            body["vllm_xargs"] = xargs
        url = s.endpoint.rstrip("/") + "/completions"
        req = urllib.request.Request(url, data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        try:
            with self._open(req, timeout=timeout) as r:
                answer = json.loads(read_capped(r, deadline=t0 + timeout, url=url))
        except EndpointError:
            raise
        except urllib.error.HTTPError as exc:
            detail = exc.read()[:500].decode("utf-8", "replace") if exc.fp is not None else ""
            raise EndpointError(f"{url}: HTTP {exc.code}: {_message(detail)}") from None
        except (urllib.error.URLError, OSError, TimeoutError) as exc:
            raise EndpointError(f"{url}: {getattr(exc, 'reason', exc)}") from None
        except (json.JSONDecodeError, UnicodeDecodeError, RecursionError):
            raise EndpointError(f"{url}: the answer is not JSON") from None
        if len(text_of(answer)) > max_tokens * MAX_CHARS_PER_TOKEN:
            raise EndpointError(f"{url}: the completion is longer than {max_tokens} tokens can be; not used")
        try:
            choice = answer["choices"][0]
            text = choice["text"]
        except (KeyError, IndexError, TypeError):
            raise EndpointError(f"{url}: the answer has no choices[0].text") from None
        if not isinstance(text, str):
            raise EndpointError(f"{url}: choices[0].text is not a string")
        lps = (choice.get("logprobs") or {}) if isinstance(choice, dict) else {}
        lps = lps.get("token_logprobs") or [] if isinstance(lps, dict) else []
        probs = [math.exp(min(x, 0.0)) for x in lps if isinstance(x, (int, float)) and not isinstance(x, bool)
                 and math.isfinite(x)] if isinstance(lps, list) else []
        # no log-probabilities: the confidence is unknown (never 1.0), and a floor cannot be met
        mean = sum(probs) / len(probs) if probs else None
        low = min(probs) if probs else None
        min_conf = request.min_confidence if request.min_confidence is not None else s.min_confidence
        withheld = (mean < min_conf) if mean is not None else min_conf > 0
        usage = answer.get("usage") if isinstance(answer.get("usage"), dict) else {}
        prompt_tokens = _count(usage.get("prompt_tokens"))
        truncated = request.offset > chars or (budget is not None and prompt_tokens >= budget)
        return Completion(text="" if withheld else text, raw_text=text,
                          tokens=len(probs) or _count(usage.get("completion_tokens")),
                          mean_prob=mean, min_prob=low, withheld=withheld,
                          stop_reason=str(choice.get("finish_reason") or "stop")[:40], guarded=bool(xargs),
                          truncated_prompt=truncated, prompt_tokens=prompt_tokens,
                          elapsed_ms=(time.perf_counter() - t0) * 1e3,
                          degraded=None if mean is not None else "the server sent no log-probabilities: confidence unknown")


#: a completion longer than this many characters per requested token is refused
MAX_CHARS_PER_TOKEN = 64


def text_of(answer: Any) -> str:
    """``choices[0].text`` of an answer when it is a string, else ``""``."""
    try:
        text = answer["choices"][0]["text"]
    except (KeyError, IndexError, TypeError):
        return ""
    return text if isinstance(text, str) else ""


def _count(value: Any) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 1 << 31 else 0


def _message(detail: str) -> str:
    try:
        got = json.loads(detail)
        msg = got.get("error", {}).get("message") if isinstance(got.get("error"), dict) else got.get("message")
        return str(msg or detail)
    except (json.JSONDecodeError, AttributeError):
        return detail or "(no body)"
