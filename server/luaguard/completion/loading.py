"""Loading the completion model that guarded decoding runs on.

``load_model()`` gives the small **demonstration** model shipped in ``luaguard/data/model`` (a
1.8M-parameter Llama trained on synthetic Roblox scripts, see its README: it shows the guard at
work, it is not a code model to rely on); ``load_model("path/to/dir")`` a local Hugging Face
model folder; ``load_model("owner/name")`` (or ``"owner/name@revision"``) a Hugging Face hub
model **already in the local cache** - loading never downloads anything
(``local_files_only=True``); ``luaguard model pull owner/name`` (:mod:`luaguard.completion.hub`) is the one
command that downloads, and every "not found" message here names it.

Safety rules (why: model folders are untrusted input):

* weights are read only from ``*.safetensors`` (``use_safetensors=True``); a folder holding only
  pickle checkpoints (``pytorch_model.bin``, ``*.pt``, ``*.ckpt`` ...) is refused before any file
  is opened - pickles can run code when loaded;
* ``trust_remote_code=False``, and a ``config.json`` that asks for custom code (``auto_map``)
  is refused with a clear message instead of transformers' interactive prompt;
* every failure becomes :class:`ModelLoadError` naming the folder and what is wrong.

torch and transformers are imported inside the functions, so ``import luaguard.completion.loading``
stays cheap for the rest of luaguard.
"""

from __future__ import annotations

import functools
import json
import os
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

#: the files ``luaguard model pull`` downloads (:func:`luaguard.completion.hub.pull`) and a local snapshot needs (``fnmatch`` patterns of huggingface_hub's ``allow_patterns``)
ALLOW_PATTERNS = (
    "config.json", "generation_config.json",
    "tokenizer.json", "tokenizer_config.json", "special_tokens_map.json", "added_tokens.json",
    "vocab.json", "merges.txt", "tokenizer.model",
    "*.safetensors", "model.safetensors.index.json",
)

__all__ = ["DEMO_NOTE", "LoadedModel", "ModelLoadError", "clear_model_cache", "default_model_path", "load_model",
           "pull_hint"]

_PICKLE_SUFFIXES = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_HUB_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*(/[A-Za-z0-9][A-Za-z0-9_.-]*)?(@[A-Za-z0-9][A-Za-z0-9_./-]*)?$")
#: what every front end says when the shipped model answers
DEMO_NOTE = ("the demonstration model (1.8M parameters, trained on synthetic Roblox scripts: it shows the guard at "
             "work, it is no code model to rely on; `luaguard model pull` gets a real one)")
_CONTEXT_KEYS = ("max_position_embeddings", "n_positions", "max_sequence_length", "seq_length", "n_ctx")


class ModelLoadError(Exception):
    """A model folder or hub id could not be loaded; the message names the path and the problem."""


@dataclass(frozen=True)
class LoadedModel:
    """A causal LM ready for generation.

    ``model`` is a ``transformers`` ``PreTrainedModel`` in eval mode on ``device``
    (``"cpu"`` or ``"cuda"``/``"cuda:N"``); ``tokenizer`` its fast tokenizer; ``path`` the
    folder the files were read from (a hub id resolves to its cache snapshot folder);
    ``context_length`` the longest input in tokens the model was built for (from the
    config's ``max_position_embeddings``/``n_positions``/..., else the tokenizer's
    ``model_max_length``); ``demonstration`` is true for the shipped demonstration model.
    """

    model: Any
    tokenizer: Any
    device: str
    path: Path
    context_length: int
    demonstration: bool = False


def default_model_path() -> Path:
    """Folder of the default model shipped inside the package (``luaguard/data/model``)."""
    return Path(str(resources.files("luaguard").joinpath("data", "model")))


def pull_hint(name: str = "OWNER/NAME") -> str:
    """The sentence every "model not found" message ends with."""
    return f"download it with `luaguard model pull {name}`, list downloaded models with `luaguard model list`"


def load_model(name_or_path: str | os.PathLike[str] | None = None, *, device: str | None = None,
               progress: bool = False) -> LoadedModel:
    """Load a causal LM and its tokenizer, offline, from safetensors only.

    Args:
        name_or_path: ``None`` for the shipped demonstration model; a local model folder; or
            a Hugging Face hub id (``"owner/name"``, ``"owner/name@revision"``) resolved only
            from the local cache (``luaguard model pull`` puts it there).
        device: ``"cpu"``, ``"cuda"``, ``"cuda:1"`` ...; ``None`` picks ``"cuda"`` when
            available, else ``"cpu"``.  On CPU the weights are up-cast to float32 (the shipped
            model is stored in float16); on CUDA the stored dtype is kept.
        progress: show transformers' weight-loading progress bar on stderr (the CLI); off,
            it is hidden (the language server's log).

    Returns:
        A :class:`LoadedModel`.  The last two loads are cached per (folder, device), so
        calling again with the same arguments returns the same object.

    Raises:
        ModelLoadError: the folder is missing or not a folder, the hub id is not in the local
            cache, ``config.json`` is missing/invalid or needs remote code, there is no
            ``.safetensors`` weight file (pickle checkpoints are refused), the weights or
            tokenizer cannot be read, or the device is not available.
    """
    path = _resolve(name_or_path)
    dev = _pick_device(device, path)
    from transformers.utils import logging as hf_logging

    (hf_logging.enable_progress_bar if progress else hf_logging.disable_progress_bar)()
    return _load_cached(str(path), dev)


def clear_model_cache() -> None:
    """Forget cached models (frees their memory once no caller holds them)."""
    _load_cached.cache_clear()


# ----------------------------------------------------------------------------- internals


def _resolve(name_or_path: str | os.PathLike[str] | None) -> Path:
    if name_or_path is None:
        path = default_model_path()
        if not path.is_dir():
            raise ModelLoadError(f"{path}: the shipped default model folder is missing (broken installation?)")
        return path.resolve()
    text = os.fspath(name_or_path)
    if not text.strip():
        raise ModelLoadError("empty model name or path")
    local = Path(text).expanduser()
    if local.exists():
        if not local.is_dir():
            raise ModelLoadError(f"{local}: not a folder (give the model folder, not a file inside it)")
        return local.resolve()
    looks_like_path = (
        isinstance(name_or_path, os.PathLike)
        or text.startswith((".", "/", "~"))
        or "\\" in text
        or text.partition("@")[0].count("/") > 1
        or not _HUB_ID.match(text)
    )
    if looks_like_path:
        raise ModelLoadError(f"{local}: no such model folder (a Hugging Face model: {pull_hint()})")
    return _resolve_hub_id(text)


def _resolve_hub_id(name: str) -> Path:
    repo_id, _, revision = name.partition("@")
    try:
        from huggingface_hub import snapshot_download
    except ImportError as exc:  # pragma: no cover - transformers depends on it
        raise ModelLoadError(f"{name}: not a local folder, and huggingface_hub is not installed") from exc
    try:
        # the files `luaguard model pull` fetches: a snapshot is complete without the rest
        snapshot = snapshot_download(repo_id, revision=revision or None, local_files_only=True,
                                     allow_patterns=list(ALLOW_PATTERNS))
    except Exception as exc:  # LocalEntryNotFoundError, HFValidationError, OSError ...
        raise ModelLoadError(
            f"{name}: not a local folder and not downloaded (not in the local Hugging Face cache); {pull_hint(name)}"
        ) from exc
    return Path(snapshot).resolve()


def _pick_device(device: str | None, path: Path) -> str:
    import torch

    if device is None:
        return "cuda" if torch.cuda.is_available() else "cpu"
    try:
        dev = torch.device(device)
    except (RuntimeError, TypeError, ValueError) as exc:
        raise ModelLoadError(f"{path}: invalid device {device!r}: {exc}") from exc
    if dev.type == "cuda" and not torch.cuda.is_available():
        raise ModelLoadError(f"{path}: device {device!r} requested but CUDA is not available")
    return str(dev)


def _check_folder(path: Path) -> dict[str, Any]:
    """Validate a model folder before transformers opens anything; returns the parsed config."""
    config_file = path / "config.json"
    if not config_file.is_file():
        raise ModelLoadError(f"{path}: no config.json (not a Hugging Face model folder)")
    from ..files import read_text

    try:
        # (a regular file within a bound; the folder is the user's choice, and Hugging Face's cache
        # links its files to a blobs folder beside it)
        config = json.loads(read_text(config_file, limit=4 * 1024 * 1024, errors="strict"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError, RecursionError) as exc:
        raise ModelLoadError(f"{config_file}: unreadable or invalid JSON: {exc}") from exc
    if not isinstance(config, dict):
        raise ModelLoadError(f"{config_file}: expected a JSON object")
    if "auto_map" in config:
        raise ModelLoadError(
            f"{config_file}: the model needs custom remote code (auto_map: {sorted(config['auto_map'])}); "
            "luaguard loads models with trust_remote_code=False only"
        )
    if "model_type" not in config:
        raise ModelLoadError(f"{config_file}: no model_type; cannot tell which standard architecture to use")
    names = sorted(p.name for p in path.iterdir() if p.is_file())
    if not any(n.endswith(".safetensors") for n in names):
        pickles = [n for n in names if n.endswith(_PICKLE_SUFFIXES)]
        if pickles:
            raise ModelLoadError(
                f"{path}: only safetensors weights are accepted, found pickle checkpoint(s) {pickles}; "
                "pickles can run code when loaded - convert them to model.safetensors"
            )
        raise ModelLoadError(f"{path}: no model.safetensors (or other *.safetensors) weight file")
    return config


def _context_length(config: dict[str, Any], model: Any, tokenizer: Any) -> int:
    for source in (getattr(model, "config", None), config):
        for key in _CONTEXT_KEYS:
            value = getattr(source, key, None) if not isinstance(source, dict) else source.get(key)
            if isinstance(value, int) and value > 0:
                return value
    limit = getattr(tokenizer, "model_max_length", None)
    if isinstance(limit, int) and 0 < limit < 1_000_000:
        return limit
    return 2048


def _load_tokenizer(path: Path) -> Any:
    from transformers import AutoTokenizer, PreTrainedTokenizerFast

    errors: list[str] = []
    try:
        return AutoTokenizer.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    except Exception as exc:  # noqa: BLE001 - any failure becomes ModelLoadError below
        errors.append(f"AutoTokenizer: {type(exc).__name__}: {exc}")
    if (path / "tokenizer.json").is_file():
        try:
            return PreTrainedTokenizerFast(tokenizer_file=str(path / "tokenizer.json"))
        except Exception as exc:  # noqa: BLE001
            errors.append(f"tokenizer.json: {type(exc).__name__}: {exc}")
    raise ModelLoadError(f"{path}: cannot load the tokenizer ({'; '.join(errors) or 'no tokenizer files'})")


def _present_parameters(path: Path) -> int:
    """The parameters the folder's ``*.safetensors`` files hold: per tensor the product of its
    shape, counted only when its ``data_offsets`` lie inside the file and match its dtype's
    size (a header cannot claim weights the file does not have).  Format:
    huggingface/safetensors (8-byte little-endian header length, JSON header)."""
    import struct

    sizes = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2, "U16": 2,
             "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}
    total = 0
    for f in sorted(path.glob("*.safetensors")):
        try:
            size = f.stat().st_size
            with f.open("rb") as fh:
                (n,) = struct.unpack("<Q", fh.read(8))
                if n > min(size - 8, 100 * 1024 * 1024):
                    raise ModelLoadError(f"{path}: cannot load the weights: {f.name} is not a safetensors file "
                                         f"(header length {n})")
                header = json.loads(fh.read(n))
        except (OSError, struct.error, ValueError, RecursionError) as exc:
            raise ModelLoadError(f"{path}: cannot load the weights: {f.name} is not a safetensors file ({exc})") from exc
        data = size - 8 - n
        for key, t in (header.items() if isinstance(header, dict) else ()):
            if key == "__metadata__" or not isinstance(t, dict):
                continue
            shape, offsets, width = t.get("shape"), t.get("data_offsets"), sizes.get(t.get("dtype"), 0)
            if not (isinstance(shape, list) and isinstance(offsets, list) and len(offsets) == 2):
                continue
            count = 1
            for d in shape:
                count *= int(d) if isinstance(d, int) and d >= 0 else 0
            begin, end = offsets
            if isinstance(begin, int) and isinstance(end, int) and 0 <= begin <= end <= data and end - begin == count * width:
                total += count
    return total


def _declared_parameters(path: Path) -> int:
    """The parameters the folder's ``config.json`` declares: its architecture built on
    PyTorch's ``meta`` device (shapes only, nothing allocated)."""
    import torch
    from transformers import AutoConfig, AutoModelForCausalLM

    config = AutoConfig.from_pretrained(str(path), local_files_only=True, trust_remote_code=False)
    with torch.device("meta"):
        model = AutoModelForCausalLM.from_config(config, trust_remote_code=False)
    return sum(p.numel() for p in model.parameters())


def memory_limit() -> int:
    """Bytes a model may take: ``$LUAGUARD_MAX_MODEL_BYTES``, else 80% of this machine's
    physical memory."""
    env = os.environ.get("LUAGUARD_MAX_MODEL_BYTES")
    if env and env.isdigit():
        return int(env)
    try:
        return int(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") * 0.8)
    except (ValueError, OSError, AttributeError):
        return 16 * 1024 ** 3


def check_declared_size(path: Path, bytes_per_parameter: int = 4) -> int:
    """Refuse, before anything is allocated, a model whose ``config.json`` declares more
    parameters than its weight files hold, or more than :func:`memory_limit` allows at
    ``bytes_per_parameter`` (4: float32 on the CPU).  Returns the declared count; raises
    :class:`ModelLoadError` naming the folder and both numbers."""
    try:
        declared = _declared_parameters(path)
    except Exception as exc:  # noqa: BLE001 - an unknown or malformed architecture
        raise ModelLoadError(f"{path}: cannot read the architecture from config.json: {type(exc).__name__}: {exc}") from exc
    present = _present_parameters(path)
    if declared > present * 1.02 + 1_000_000:
        raise ModelLoadError(f"{path}: cannot load the weights: config.json declares {declared:,} parameters, but the "
                             f"safetensors files hold {present:,} (a config that does not match its weights); not loaded")
    need, limit = declared * bytes_per_parameter, memory_limit()
    if need > limit:
        raise ModelLoadError(f"{path / 'config.json'}: declares {declared:,} parameters ({need / 1e9:.1f} GB at "
                             f"{bytes_per_parameter} bytes each), more than the {limit / 1e9:.1f} GB a model may take "
                             f"here (LUAGUARD_MAX_MODEL_BYTES); not loaded")
    return declared


@functools.lru_cache(maxsize=2)
def _load_cached(path_str: str, device: str) -> LoadedModel:
    path = Path(path_str)
    config = _check_folder(path)
    check_declared_size(path, 4 if device == "cpu" else 2)
    import torch
    from transformers import AutoModelForCausalLM

    dtype: Any = torch.float32 if device == "cpu" else "auto"
    try:
        model, info = AutoModelForCausalLM.from_pretrained(
            path_str,
            use_safetensors=True,
            trust_remote_code=False,
            local_files_only=True,
            dtype=dtype,
            output_loading_info=True,
        )
    except Exception as exc:  # noqa: BLE001 - corrupt files raise many kinds of error
        raise ModelLoadError(f"{path}: cannot load the weights: {type(exc).__name__}: {exc}") from exc
    # transformers fills weights absent from the file with random values and only warns:
    # a model that would generate noise is an error here.
    missing = sorted(info.get("missing_keys") or ())
    mismatched = [str(k[0]) if isinstance(k, tuple) else str(k) for k in info.get("mismatched_keys") or ()]
    if missing or mismatched:
        shown = (missing + mismatched)[:5]
        raise ModelLoadError(
            f"{path}: cannot load the weights: the safetensors file does not match the architecture "
            f"({len(missing)} missing, {len(mismatched)} mismatched tensors, e.g. {shown})"
        )
    tokenizer = _load_tokenizer(path)
    try:
        model.to(device)
    except Exception as exc:  # noqa: BLE001
        raise ModelLoadError(f"{path}: cannot move the model to {device!r}: {exc}") from exc
    model.eval()
    return LoadedModel(
        model=model,
        tokenizer=tokenizer,
        device=device,
        path=path,
        context_length=_context_length(config, model, tokenizer),
        demonstration=path == default_model_path().resolve(),
    )
