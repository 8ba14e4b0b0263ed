"""Getting a completion model: ``luaguard model pull NAME`` and ``luaguard model list``.

:func:`pull` downloads a Hugging Face model into the local Hugging Face cache (where
``completion.model = "owner/name"`` then finds it, offline) with ``huggingface_hub``'s
``snapshot_download``, restricted to what loading needs: the config, the tokenizer files and
the ``*.safetensors`` weights (:data:`ALLOW_PATTERNS`) - never pickle checkpoints, code or
other weights formats.  Before any weight is fetched it reads the repository's file list and
its ``config.json`` (and ``tokenizer_config.json``) and refuses a repository that has no
safetensors weights or needs remote code (an ``auto_map``: luaguard loads models with
``trust_remote_code=False`` only).  Resuming: files already in the cache are never fetched
again, so a pull that stops (Ctrl-C, a crash) goes on from the first unfinished file when the
same command runs again; within a run, a dropped connection is resumed where it stopped (an
HTTP ``Range``, by ``huggingface_hub``).  (``huggingface_hub`` 2.x no longer keeps a partial
file across runs: an interrupted file starts over.)  ``HF_ENDPOINT`` (a mirror),
``HF_HOME``/``HF_HUB_CACHE`` (where the cache is) and ``HF_TOKEN`` (gated models) are
``huggingface_hub``'s own settings.

:func:`list_models` lists the shipped demonstration model and every model repository in that
cache, with its size on disk, parameter count (from the safetensors headers), FIM family
(from the tokenizer's special tokens, :mod:`luaguard.completion.fim`) and whether luaguard can
load it.

Only ``huggingface_hub`` is imported (lazily); no torch, no transformers.  Errors become
:class:`HubError` with a message that says what to do.
"""

from __future__ import annotations

import json
import re
import struct
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from .loading import ALLOW_PATTERNS

__all__ = ["ALLOW_PATTERNS", "HubError", "ModelEntry", "PullResult", "format_parameters", "format_table", "list_models",
           "pull", "safetensors_parameters"]

_REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]*/[A-Za-z0-9][A-Za-z0-9_.-]*$")
_PICKLE = (".bin", ".pt", ".pth", ".ckpt", ".pkl", ".pickle")
_DTYPE_BYTES = {"F64": 8, "I64": 8, "U64": 8, "F32": 4, "I32": 4, "U32": 4, "F16": 2, "BF16": 2, "I16": 2,
                "U16": 2, "F8_E4M3": 1, "F8_E5M2": 1, "I8": 1, "U8": 1, "BOOL": 1}


class HubError(Exception):
    """A model could not be pulled or listed; ``str()`` says why and what to do."""


@dataclass(frozen=True)
class PullResult:
    """A finished :func:`pull`: ``repo_id``, ``commit`` (the snapshot's commit hash),
    ``revision`` (as asked, ``None`` = the default branch), ``path`` (the snapshot folder),
    ``files`` (repository paths downloaded or already there), ``bytes`` (their size)."""

    repo_id: str
    commit: str
    revision: str | None
    path: Path
    files: tuple[str, ...]
    bytes: int

    @property
    def setting(self) -> str:
        """The value of ``completion.model`` (and ``--model``) that loads this snapshot."""
        return self.repo_id if self.revision in (None, "main") else f"{self.repo_id}@{self.revision}"


@dataclass(frozen=True)
class ModelEntry:
    """One line of :func:`list_models`: ``name`` (what ``completion.model`` takes),
    ``revision`` (ref names, else the short commit), ``path``, ``size`` (bytes on disk),
    ``parameters`` (``None`` when unknown), ``family`` (FIM family or ``None``),
    ``problems`` (why luaguard cannot load it; empty = loadable), ``demonstration``."""

    name: str
    revision: str
    path: Path
    size: int
    parameters: int | None
    family: str | None
    problems: tuple[str, ...] = field(default=())
    demonstration: bool = False

    def to_json(self) -> dict[str, Any]:
        return {"name": self.name, "revision": self.revision, "path": str(self.path), "sizeBytes": self.size,
                "parameters": self.parameters, "fimFamily": self.family, "loadable": not self.problems,
                "problems": list(self.problems), "demonstration": self.demonstration}


# ----------------------------------------------------------------------------------- pull


def _endpoint() -> str:
    from huggingface_hub import constants

    return constants.ENDPOINT


def _explain(exc: BaseException, repo_id: str, revision: str | None) -> HubError:
    """A :class:`HubError` for an exception of huggingface_hub (or of its HTTP client)."""
    from huggingface_hub import errors

    where = _endpoint()
    if isinstance(exc, errors.GatedRepoError):
        return HubError(f"{repo_id} is gated on {where}: accept its licence on the model's page, then log in "
                        "(`hf auth login`, or set HF_TOKEN) and run the command again")
    if isinstance(exc, errors.RepositoryNotFoundError):
        return HubError(f"{repo_id}: no such model on {where} (or it is private: log in with `hf auth login` or set "
                        "HF_TOKEN); check the name on the model's page")
    if isinstance(exc, errors.RevisionNotFoundError):
        return HubError(f"{repo_id}: no revision {revision!r} on {where} (a branch, tag or commit of the repository)")
    if isinstance(exc, errors.OfflineModeIsEnabled):
        return HubError(f"{repo_id}: HF_HUB_OFFLINE is set, so nothing can be downloaded; unset it to pull")
    if isinstance(exc, errors.HfHubHTTPError):
        return HubError(f"{repo_id}: {where} answered an error: {str(exc).splitlines()[0]}")
    name = type(exc).__name__
    if isinstance(exc, (ConnectionError, TimeoutError)) or "Connect" in name or "Timeout" in name or "Network" in name:
        return HubError(f"{repo_id}: cannot reach {where} ({name}: {exc}); check the network (or HF_ENDPOINT) and run "
                        "the command again - the files already downloaded are kept")
    return HubError(f"{repo_id}: download failed ({name}: {exc}); run the command again to go on (finished files are kept)")


def _check_config(data: Any, what: str) -> None:
    if not isinstance(data, dict):
        raise HubError(f"{what}: not a JSON object")
    if "auto_map" in data:
        raise HubError(f"{what}: the model needs custom remote code (auto_map: {sorted(data['auto_map'])}); luaguard "
                       "loads models with trust_remote_code=False only, so it does not download it")


def _read_json(path: str | Path, what: str) -> Any:
    try:
        return json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HubError(f"{what}: unreadable or invalid JSON: {exc}") from exc


def pull(name: str, revision: str | None = None, *, progress: bool = True,
         say: Callable[[str], None] | None = None) -> PullResult:
    """Download model ``name`` (``owner/name``; ``owner/name@revision`` is accepted too) at
    ``revision`` (branch, tag or commit; default the repository's default branch) into the
    Hugging Face cache; return a :class:`PullResult`.

    ``progress``: huggingface_hub's progress bars on stderr; ``say``: called with one line
    before the download (what is fetched and how much).  Files already in the cache are not
    fetched again (see the module docstring on resuming).

    Raises :class:`HubError`: a malformed name, an unknown or gated repository or revision, no
    safetensors weights (pickle checkpoints only), no ``config.json``, a config or tokenizer
    config that asks for remote code, a network failure, or a downloaded weights file that is
    not safetensors.
    """
    if "@" in name:
        name, _, at = name.partition("@")
        if revision is not None and revision != at:
            raise HubError(f"{name}: two revisions given ({at!r} and --revision {revision!r})")
        revision = at or None
    if not _REPO_ID.match(name):
        raise HubError(f"{name!r}: expected a Hugging Face model id OWNER/NAME (e.g. Qwen/Qwen2.5-Coder-1.5B)")
    try:
        from huggingface_hub import HfApi, hf_hub_download, snapshot_download
        from huggingface_hub.utils import disable_progress_bars, enable_progress_bars
    except ImportError as exc:  # pragma: no cover - transformers (the guard extra) depends on it
        from ..install import extra_command

        raise HubError(f"luaguard model pull needs huggingface_hub (luaguard's guard extra): {extra_command('guard')}") from exc

    (enable_progress_bars if progress else disable_progress_bars)()
    endpoint = _endpoint()  # (passed on explicitly: some of huggingface_hub's URLs are fixed at its import)
    try:
        info = HfApi(endpoint=endpoint).model_info(name, revision=revision, files_metadata=True)
    except Exception as exc:  # noqa: BLE001 - every failure becomes a HubError with advice
        raise _explain(exc, name, revision) from exc
    commit = str(info.sha)
    siblings = {s.rfilename: (s.size or 0) for s in (info.siblings or ())}
    weights = sorted(f for f in siblings if f.endswith(".safetensors") and "/" not in f)
    if "config.json" not in siblings:
        raise HubError(f"{name}: the repository has no config.json at its top level (not a transformers model)")
    if not weights:
        pickles = sorted(f for f in siblings if f.endswith(_PICKLE))
        raise HubError(f"{name}: no *.safetensors weights" + (f", only pickle checkpoints {pickles[:3]}" if pickles else "")
                       + "; luaguard loads safetensors only (pickles can run code when loaded)")
    try:
        config = hf_hub_download(name, "config.json", revision=commit, endpoint=endpoint)
        _check_config(_read_json(config, f"{name}: config.json"), f"{name}: config.json")
        if "tokenizer_config.json" in siblings:
            tconf = hf_hub_download(name, "tokenizer_config.json", revision=commit, endpoint=endpoint)
            _check_config(_read_json(tconf, f"{name}: tokenizer_config.json"), f"{name}: tokenizer_config.json")
    except HubError:
        raise
    except Exception as exc:  # noqa: BLE001
        raise _explain(exc, name, revision) from exc
    from fnmatch import fnmatch

    wanted = sorted(f for f in siblings if "/" not in f and any(fnmatch(f, p) for p in ALLOW_PATTERNS))
    total = sum(siblings[f] for f in wanted)
    if say is not None:
        say(f"{name} at {revision or 'the default branch'} (commit {commit[:10]}): {len(wanted)} files, "
            f"{_size(total)} (config, tokenizer, safetensors)")
    try:
        # the branch or tag name (not the commit) so the cache records it: completion.model = NAME finds it
        path = Path(snapshot_download(name, revision=revision or "main", allow_patterns=list(ALLOW_PATTERNS),
                                      endpoint=endpoint))
    except Exception as exc:  # noqa: BLE001
        raise _explain(exc, name, revision) from exc
    # the branch may have moved since the check: check what was downloaded too
    _check_config(_read_json(path / "config.json", f"{path / 'config.json'}"), f"{name}: config.json")
    files = tuple(sorted(p.relative_to(path).as_posix() for p in path.rglob("*") if p.is_file()))
    for f in files:
        if f.endswith(".safetensors"):
            safetensors_parameters(path / f)  # raises HubError for a file that is not safetensors
    size = sum((path / f).stat().st_size for f in files)
    return PullResult(repo_id=name, commit=path.name, revision=revision, path=path, files=files, bytes=size)


def safetensors_parameters(path: str | Path) -> int:
    """The number of parameters in a ``.safetensors`` file, from its header (the 8-byte
    little-endian header length, then the JSON header of tensor dtypes and shapes; the
    format of huggingface/safetensors).  Raises :class:`HubError` for a file that is not
    safetensors."""
    p = Path(path)
    try:
        with p.open("rb") as f:
            head = f.read(8)
            if len(head) != 8:
                raise HubError(f"{p}: not a safetensors file (shorter than its header)")
            (n,) = struct.unpack("<Q", head)
            if n > 100 * 1024 * 1024 or n > p.stat().st_size - 8:
                raise HubError(f"{p}: not a safetensors file (header length {n})")
            header = json.loads(f.read(n))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise HubError(f"{p}: not a safetensors file ({exc})") from exc
    if not isinstance(header, dict):
        raise HubError(f"{p}: not a safetensors file (header is not an object)")
    total = 0
    for key, t in header.items():
        if key == "__metadata__":
            continue
        shape = t.get("shape") if isinstance(t, dict) else None
        if not isinstance(shape, list):
            raise HubError(f"{p}: not a safetensors file (tensor {key!r} has no shape)")
        count = 1
        for d in shape:
            count *= int(d)
        total += count
    return total


# ----------------------------------------------------------------------------------- list


def _size(n: int) -> str:
    for unit, scale in (("GB", 1e9), ("MB", 1e6), ("kB", 1e3)):
        if n >= scale:
            return f"{n / scale:.1f} {unit}"
    return f"{n} B"


def _family(folder: Path) -> str | None:
    """The FIM family of the tokenizer in ``folder``, from the special tokens its
    ``tokenizer.json``/``tokenizer_config.json`` name (no tokenizer is built)."""
    from .fim import FAMILIES

    names: set[str] = set()
    for fname in ("tokenizer.json", "tokenizer_config.json", "added_tokens.json", "special_tokens_map.json"):
        f = folder / fname
        if not f.is_file():
            continue
        try:
            data = json.loads(f.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            continue
        if not isinstance(data, dict):
            continue
        for t in data.get("added_tokens") or ():
            if isinstance(t, dict) and isinstance(t.get("content"), str):
                names.add(t["content"])
        for t in (data.get("added_tokens_decoder") or {}).values():
            if isinstance(t, dict) and isinstance(t.get("content"), str):
                names.add(t["content"])
        for key in ("additional_special_tokens", "extra_special_tokens"):
            for t in data.get(key) or ():
                names.add(t if isinstance(t, str) else str((t or {}).get("content", "")))
        if fname == "added_tokens.json":
            names.update(k for k in data if isinstance(k, str))
    for fam in FAMILIES:
        parts = [fam.prefix, fam.suffix] + ([fam.middle] if fam.middle else [])
        if all(any(s in names for s in spellings) for spellings in parts) and all(r in names for r in fam.requires):
            return fam.name
    return None


def _inspect(folder: Path) -> tuple[int | None, str | None, tuple[str, ...]]:
    """(parameters, FIM family, problems) of a model folder."""
    problems: list[str] = []
    config = folder / "config.json"
    if not config.is_file():
        problems.append("no config.json")
    else:
        try:
            data = json.loads(config.read_text(encoding="utf-8"))
            if not isinstance(data, dict):
                problems.append("config.json is not an object")
            elif "auto_map" in data:
                problems.append("needs remote code")
            elif "model_type" not in data:
                problems.append("config.json has no model_type")
        except (OSError, UnicodeDecodeError, json.JSONDecodeError):
            problems.append("config.json is not JSON")
    weights = sorted(folder.glob("*.safetensors"))
    params: int | None = None
    if not weights:
        problems.append("no safetensors weights")
    else:
        try:
            params = sum(safetensors_parameters(w) for w in weights)
        except HubError:
            problems.append("a weights file is not safetensors (incomplete download? pull again)")
    if not any((folder / f).is_file() for f in ("tokenizer.json", "tokenizer.model", "vocab.json")):
        problems.append("no tokenizer")
    return params, _family(folder), tuple(problems)


def list_models(cache_dir: str | Path | None = None) -> list[ModelEntry]:
    """The shipped demonstration model, then every model repository revision in the Hugging
    Face cache (``cache_dir``, default huggingface_hub's), sorted by name.  Datasets and
    spaces in the cache are left out.  A missing cache is an empty list; an unreadable
    one raises :class:`HubError`."""
    from .loading import default_model_path

    demo = default_model_path()
    params, family, problems = _inspect(demo)
    out = [ModelEntry("demonstration", "shipped", demo, sum(p.stat().st_size for p in demo.iterdir() if p.is_file()),
                      params, family, problems, demonstration=True)]
    try:
        from huggingface_hub import constants, scan_cache_dir
        from huggingface_hub.errors import CacheNotFound
    except ImportError:  # pragma: no cover - the guard extra brings it
        return out
    try:
        # (the folder read now: one module of huggingface_hub fixes its default at import)
        info = scan_cache_dir(cache_dir or constants.HF_HUB_CACHE)
    except CacheNotFound:
        return out
    except (OSError, ValueError) as exc:
        raise HubError(f"cannot read the Hugging Face cache: {exc}") from exc
    rows: list[ModelEntry] = []
    for repo in info.repos:
        if repo.repo_type != "model":
            continue
        for rev in repo.revisions:
            refs = sorted(rev.refs)
            params, family, problems = _inspect(Path(rev.snapshot_path))
            name = repo.repo_id if "main" in refs else f"{repo.repo_id}@{refs[0] if refs else rev.commit_hash}"
            rows.append(ModelEntry(name, ",".join(refs) or rev.commit_hash[:10], Path(rev.snapshot_path),
                                   int(rev.size_on_disk), params, family, problems))
    return out + sorted(rows, key=lambda e: e.name.lower())


def format_parameters(n: int | None) -> str:
    """``1.54B``, ``494M``, ``1.8M``; ``?`` when unknown."""
    if n is None:
        return "?"
    if n >= 1e9:
        return f"{n / 1e9:.2f}B"
    if n >= 1e7:
        return f"{n / 1e6:.0f}M"
    return f"{n / 1e6:.1f}M"


def format_table(entries: list[ModelEntry]) -> str:
    """``luaguard model list``'s text: one row per entry, then how to use one."""
    head = ("NAME", "REVISION", "SIZE", "PARAMS", "FIM", "STATUS")
    rows = [head]
    for e in entries:
        status = "demonstration only" if e.demonstration and not e.problems else ("ok" if not e.problems else
                                                                                  "cannot load: " + "; ".join(e.problems))
        rows.append((e.name, e.revision, _size(e.size), format_parameters(e.parameters), e.family or "-", status))
    widths = [max(len(r[i]) for r in rows) for i in range(len(head) - 1)]
    lines = ["  ".join(r[i].ljust(widths[i]) for i in range(len(head) - 1)) + "  " + r[-1] for r in rows]
    lines.append("")
    lines.append('Use one: `luaguard complete FILE:LINE:COL --model NAME`, or [completion] model = "NAME" in luaguard.toml.')
    lines.append("Get one: `luaguard model pull OWNER/NAME` (recommended models: see the README).")
    try:
        from huggingface_hub import constants

        lines.append(f"Downloaded models live in the Hugging Face cache: {constants.HF_HUB_CACHE}")
    except ImportError:  # pragma: no cover
        pass
    return "\n".join(lines)
