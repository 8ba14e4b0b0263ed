"""Stand-ins for the vLLM V1 logits-processor interface types that luaguard.serving.vllm
imports, defined as vllm 0.32 defines them (names, fields, the enum's members) - for the unit
tests and ``bench/serving.py --guard-only`` where vLLM is not installed.  The real engine is
exercised by tests/serving/check_vllm.py."""

from __future__ import annotations

import abc
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


class V2LogitsProcessor(abc.ABC):
    """``vllm.v1.worker.gpu.sample.logits_processor.interface.LogitsProcessor`` (Model Runner
    V2): ``__init__(vllm_config, req_states)``, ``add_request``, ``apply(logits, ctx)``."""

    def __init__(self, vllm_config, req_states):  # noqa: B027
        pass

    @classmethod
    def validate_params(cls, sampling_params) -> None:  # noqa: B027
        pass

    def add_request(self, req_idx, sampling_params) -> bool:
        return True

    def apply_staged_writes(self) -> None:  # noqa: B027
        pass

    @abc.abstractmethod
    def apply(self, logits, ctx):
        raise NotImplementedError


def modules() -> dict[str, types.ModuleType]:
    """``{module name: module}`` for ``sys.modules``: ``vllm``,
    ``vllm.v1.sample.logits_processor`` and Model Runner V2's
    ``vllm.v1.worker.gpu.sample.logits_processor.interface`` with the types above (and their
    parents)."""
    vllm = types.ModuleType("vllm")
    vllm.SamplingParams = SamplingParams
    vllm.__version__ = "stand-in"
    lp = types.ModuleType("vllm.v1.sample.logits_processor")
    lp.BatchUpdate, lp.LogitsProcessor, lp.MoveDirectionality = BatchUpdate, LogitsProcessor, MoveDirectionality
    v2 = types.ModuleType("vllm.v1.worker.gpu.sample.logits_processor.interface")
    v2.LogitsProcessor = V2LogitsProcessor
    parents = ("vllm.v1", "vllm.v1.sample", "vllm.v1.worker", "vllm.v1.worker.gpu", "vllm.v1.worker.gpu.sample",
               "vllm.v1.worker.gpu.sample.logits_processor")
    return {"vllm": vllm, **{name: types.ModuleType(name) for name in parents},
            "vllm.v1.sample.logits_processor": lp, v2.__name__: v2}
