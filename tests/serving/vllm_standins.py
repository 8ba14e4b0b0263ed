"""Stand-ins for the vLLM V1 logits-processor interface types that luaguard.serving.vllm
imports, defined as vllm 0.32 defines them (names, fields, the enum's members) - for the unit
tests and ``bench/serving.py --guard-only`` where vLLM is not installed.  The real engine is
exercised by tests/serving/check_vllm.py."""

from __future__ import annotations

import enum
import types
from dataclasses import dataclass
from typing import Any


class SamplingParams:
    """``vllm.SamplingParams``: only ``extra_args`` is read by the processor."""

    def __init__(self, extra_args=None, **kw):
        self.extra_args = extra_args


class MoveDirectionality(enum.Enum):
    UNIDIRECTIONAL = enum.auto()
    SWAP = enum.auto()


@dataclass(frozen=True)
class BatchUpdate:
    batch_size: int
    removed: Any
    added: Any
    moved: Any


class LogitsProcessor:
    pass


def modules() -> dict[str, types.ModuleType]:
    """``{module name: module}`` for ``sys.modules``: ``vllm`` and
    ``vllm.v1.sample.logits_processor`` with the types above (and their parents)."""
    vllm = types.ModuleType("vllm")
    vllm.SamplingParams = SamplingParams
    vllm.__version__ = "stand-in"
    lp = types.ModuleType("vllm.v1.sample.logits_processor")
    lp.BatchUpdate, lp.LogitsProcessor, lp.MoveDirectionality = BatchUpdate, LogitsProcessor, MoveDirectionality
    return {"vllm": vllm, "vllm.v1": types.ModuleType("vllm.v1"),
            "vllm.v1.sample": types.ModuleType("vllm.v1.sample"), "vllm.v1.sample.logits_processor": lp}
