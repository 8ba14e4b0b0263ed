"""The request and result of a completion: plain data with no numpy or torch behind it, so a
front end that asks a remote server (:mod:`luaguard.completion.client`) shares them with the local
engine (:mod:`luaguard.completion.generate`) without importing the guard's dependencies."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

__all__ = ["Completion", "CompletionRequest", "parse_location"]


@dataclass(frozen=True)
class CompletionRequest:
    """One completion request.

    ``text``: the whole document; ``offset``: the cursor (a ``str`` index); ``path``: the
    document's path (absolute or project-relative) so ``script`` resolves; ``max_tokens`` /
    ``timeout_ms`` / ``min_confidence`` / ``guard`` default to the engine's settings;
    ``temperature`` 0 is greedy; ``seed`` makes sampling reproducible; ``fim`` sends the
    text after the cursor too when the model supports fill-in-the-middle; ``stop`` is
    ``"balanced"`` or ``"line"``; ``grounded_numbers`` turns on the asset-id check.
    """

    text: str
    offset: int
    path: str | None = None
    max_tokens: int | None = None
    timeout_ms: int | None = None
    min_confidence: float | None = None
    guard: bool | None = None
    temperature: float = 0.0
    top_p: float = 1.0
    seed: int = 0
    fim: bool = True
    stop: str = "balanced"
    grounded_numbers: bool = False


@dataclass
class Completion:
    """The result of :meth:`CompletionEngine.complete` (see the module docstring).

    Which model answered: ``backend`` (``"local"``: a model loaded in this process;
    ``"endpoint"``: a server, ``completion.endpoint``; ``None`` when the producer did not
    say), ``model`` (the name or folder asked for, or the endpoint's model), ``demonstration``
    (the shipped demonstration model answered) and ``fim_family`` (the model's FIM format,
    :mod:`luaguard.completion.fim`, when the prompt used it).
    """

    text: str
    raw_text: str
    tokens: int
    mean_prob: float | None  # None: unknown (a server that sent no log-probabilities)
    min_prob: float | None
    withheld: bool
    stop_reason: str
    guarded: bool
    truncated_prompt: bool
    prompt_tokens: int
    elapsed_ms: float
    degraded: str | None = None
    facts: tuple[str, ...] = ()
    mask_us: list[float] = field(default_factory=list, repr=False)
    backend: str | None = None
    model: str | None = None
    demonstration: bool = False
    fim_family: str | None = None

    def to_json(self) -> dict[str, Any]:
        return {
            "text": self.text, "rawText": self.raw_text, "tokens": self.tokens,
            "meanProb": None if self.mean_prob is None else round(self.mean_prob, 4),
            "minProb": None if self.min_prob is None else round(self.min_prob, 4),
            "withheld": self.withheld, "stopReason": self.stop_reason, "guarded": self.guarded,
            "truncatedPrompt": self.truncated_prompt, "promptTokens": self.prompt_tokens,
            "elapsedMs": round(self.elapsed_ms, 1), "degraded": self.degraded, "facts": list(self.facts),
            "backend": self.backend, "model": self.model, "demonstration": self.demonstration,
            "fimFamily": self.fim_family,
        }


def parse_location(text: str) -> tuple[str, int, int]:
    """``"path/to/file.luau:12:5"`` -> ``("path/to/file.luau", 12, 5)`` (1-based line and
    column).  Raises ``ValueError`` naming what is wrong."""
    parts = text.rsplit(":", 2)
    if len(parts) != 3 or not parts[0]:
        raise ValueError(f"{text!r}: expected FILE:LINE:COL")
    path, line, col = parts
    try:
        ln, cn = int(line), int(col)
    except ValueError:
        raise ValueError(f"{text!r}: LINE and COL must be numbers") from None
    if ln < 1 or cn < 1:
        raise ValueError(f"{text!r}: LINE and COL start at 1")
    return path, ln, cn
