"""The completion prompt: file prefix (and suffix), plus project facts, within a token budget.

:func:`build_prompt` assembles what the model reads:

* a **facts header** of Luau comments in the format the shipped model was trained on
  (:func:`format_prompt_context`): the script's own instance path,
  its parent and siblings, the children of the instances the file's locals are bound to
  (``-- game.ReplicatedStorage.Remotes: Attack, Dash``), and the exported members of the
  modules the file requires (``-- game.ReplicatedStorage.Shared.Util.Signal exports: new,
  Connect``).  Facts are added in that order until the header budget is spent;
* the **file prefix** up to the cursor, truncated from the left (whole tokens) when the
  prompt would not fit the model's context;
* the **file suffix** after the cursor, in the fill-in-the-middle format of the model's
  family (:mod:`.fim`: StarCoder, Qwen, DeepSeek, CodeLlama, Codestral, CodeGemma, recognised
  from the tokenizer's special tokens) when ``fim`` is on and the text after the cursor is
  not blank;
* for a family with repository tokens (Qwen), the **repository context** before it: the
  project's name, the sources of the modules the file requires (whole files, while they fit
  the header budget) and the file's own path.

The guard reads ``guard_text`` (header + the whole prefix): the open brackets, the lexical
state at the cursor and the prompt's bindings do not depend on what was cut for the model.
Text is tokenized with ``split_special_tokens=True``, so a file that contains
``<|endoftext|>`` cannot inject a special token.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..files import read_text
from ..project.tree import Instance
from .fim import encode_continuation, encode_text, fim_spec, repo_context_ids, repo_file_ids

__all__ = ["Prompt", "build_prompt", "describe_children", "encode_text", "format_prompt_context", "module_exports"]

_MAX_FACTS = 24
_RETURN_NAME = re.compile(r"^\s*return\s+([A-Za-z_][A-Za-z0-9_]*)\s*$", re.MULTILINE)
_RETURN_TABLE = re.compile(r"^return\s*\{", re.MULTILINE)
_EXPORT_TEMPLATE = r"^(?:function\s+{name}\s*[.:]\s*([A-Za-z_][A-Za-z0-9_]*)|{name}\s*\.\s*([A-Za-z_][A-Za-z0-9_]*)\s*=)"
_TABLE_KEY = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=", re.MULTILINE)


_HEADER_MAX_ITEMS = 24
_CONTROL = re.compile(r"[\x00-\x1f\x7f]")


def _clean(text: str) -> str:
    """One header-safe line: control characters (newlines included) become spaces."""
    return _CONTROL.sub(" ", text).strip()


def format_prompt_context(script_path: str, siblings: list[str], parent: str, extra: list[str]) -> str:
    """The Luau comment block that precedes a file prefix in a completion prompt.

    The shipped demonstration model was trained with this exact header in front of most
    training scripts (``training/corpus.py`` writes it with this function), so a prompt built
    with it tells the model which instance names exist; for other models it is a block of
    ordinary Luau comments.

    Layout (each line a Luau ``--`` comment; lines with nothing to say are left out)::

        -- script: game.ServerScriptService.Services.CombatService
        -- parent: game.ServerScriptService.Services
        -- siblings: DataService, ShopService
        -- game.ReplicatedStorage.Modules: Combat, Util, Weapons
        -- game.ReplicatedStorage.Remotes: DamageEvent, UpdateHud

    Args:
        script_path: dotted instance path of the script being edited (``Instance.path``).
        siblings: names of the script's siblings (other children of its parent), at most
            24 are written, then ``...``.
        parent: the parent's dotted path (a bare name is accepted too).
        extra: further one-line project facts, written one per line; the trained form is
            ``"<container path>: <child>, <child>"`` as :func:`describe_children` makes.

    Returns:
        The header text, ending with a newline (empty string when every input is empty).
        Control characters in the inputs are replaced by spaces, so the block is always
        exactly one comment line per fact.
    """
    lines: list[str] = []
    if _clean(script_path):
        lines.append(f"-- script: {_clean(script_path)}")
    if _clean(parent):
        lines.append(f"-- parent: {_clean(parent)}")
    names = [_clean(s) for s in siblings if _clean(s)]
    if names:
        shown = names[:_HEADER_MAX_ITEMS] + (["..."] if len(names) > _HEADER_MAX_ITEMS else [])
        lines.append(f"-- siblings: {', '.join(shown)}")
    for fact in extra:
        fact = _clean(fact)
        if fact:
            lines.append(f"-- {fact}")
    return "".join(line + "\n" for line in lines)


def describe_children(node: Instance, max_items: int = _HEADER_MAX_ITEMS) -> str:
    """``"<path>: <child>, <child>, ..."`` for one container (the header's fact form).

    Children are listed in tree order, at most ``max_items`` then ``...``; a node with no
    children gives ``"<path>: (empty)"``.
    """
    names = [child.name for child in node.all_children()]
    if not names:
        return f"{node.path}: (empty)"
    shown = names[:max_items] + (["..."] if len(names) > max_items else [])
    return f"{node.path}: {', '.join(shown)}"


@dataclass(frozen=True)
class Prompt:
    """A prompt ready for generation.

    ``input_ids``: token ids for the model; ``guard_text``: the text the guard primes on
    (the model continues right after it); ``header``: the facts header; ``truncated``: the
    prefix was cut from the left to fit; ``fim``: the suffix is included; ``facts``: the
    fact lines used; ``family``: the model's FIM family (:mod:`.fim`), ``None`` when its
    tokenizer has no FIM tokens; ``context_files``: the files written as repository context.
    """

    input_ids: list[int]
    guard_text: str
    header: str
    truncated: bool
    fim: bool
    facts: tuple[str, ...]
    family: str | None = None
    context_files: tuple[str, ...] = ()


def module_exports(source: str, limit: int = 24) -> list[str]:
    """Names a ModuleScript's source exports: fields of the table it returns
    (``function M.f``, ``function M:m``, ``M.x =``) or the keys of a returned table
    constructor.  A regular-expression scan; at most ``limit`` names."""
    names: dict[str, None] = {}
    m = None
    for m in _RETURN_NAME.finditer(source):
        pass
    if m is not None:
        pat = re.compile(_EXPORT_TEMPLATE.format(name=re.escape(m.group(1))), re.MULTILINE)
        for hit in pat.finditer(source):
            names[hit.group(1) or hit.group(2)] = None
    else:
        t = None
        for t in _RETURN_TABLE.finditer(source):
            pass
        if t is not None:
            depth = 0
            body_start = t.end()
            i = body_start
            while i < len(source):
                c = source[i]
                if c in "{([":
                    depth += 1
                elif c in "})]":
                    if depth == 0:
                        break
                    depth -= 1
                i += 1
            body = source[body_start:i]
            for line in body.splitlines():
                km = _TABLE_KEY.match(line)
                if km and not line.startswith((" " * 8, "\t\t")):
                    names[km.group(1)] = None
    return list(names)[:limit]


def _facts(project, scripts: Sequence[Instance], analysis, bindings: dict[str, int] | None,
           space) -> tuple[str, str, list[str], list[str], list[tuple[str, str]]]:
    """(script path, parent path, siblings, extra fact lines, (path, source) of the required
    modules) for the header and the repository context."""
    script_path = parent_path = ""
    siblings: list[str] = []
    extra: list[str] = []
    sources: list[tuple[str, str]] = []
    if scripts:
        me = scripts[0]
        script_path = me.path
        if me.parent is not None:
            parent_path = me.parent.path
            siblings = [c.name for c in me.parent.all_children() if c is not me]
    if project is None or space is None:
        return script_path, parent_path, siblings, extra, sources
    seen: set[int] = set()
    for value in (bindings or {}).values():
        for node in space.nodes(value) if value >= 0 else ():
            if id(node) in seen or not node.all_children():
                continue
            seen.add(id(node))
            extra.append(describe_children(node))
    # exported members of required modules
    for mod in analysis.requires if analysis is not None else ():
        if id(mod) in seen or mod.class_name != "ModuleScript":
            continue
        seen.add(id(mod))
        rel = project.file_for_instance(mod)
        if not rel or not rel.endswith((".lua", ".luau")):
            continue
        try:
            src = read_text(Path(project.root_dir) / rel, root=project.root_dir)
        except OSError:
            continue
        sources.append((rel, src))
        names = module_exports(src)
        if names:
            extra.append(f"{mod.path} exports: {', '.join(names)}")
    return script_path, parent_path, siblings, extra, sources


def build_prompt(
    text: str,
    offset: int,
    *,
    tokenizer: Any,
    context_length: int,
    max_new_tokens: int,
    project=None,
    scripts: Sequence[Instance] = (),
    analysis=None,
    space=None,
    fim: bool = True,
    path: str | None = None,
    header_share: float = 0.25,
    suffix_share: float = 0.25,
) -> Prompt:
    """Assemble the prompt for a completion at ``offset`` (a ``str`` index) of ``text``.

    The model gets at most ``context_length - max_new_tokens`` tokens (at least 16): the
    header (and repository context) takes at most ``header_share`` of them, the suffix (FIM
    only) ``suffix_share``, the prefix the rest, keeping its end.  ``space`` (a
    :class:`~.paths.PathSpace`) and ``analysis`` (its :meth:`~.paths.PathSpace.analyze` of
    the prefix; made here when not given) add the children of the instances the prefix's
    locals are bound to and the exports of required modules to the facts.  ``path``: the
    file's project-relative path, written in the repository context of a family that has
    one (with ``project``).

    Raises ``ValueError`` for an offset outside the text.
    """

    if not 0 <= offset <= len(text):
        raise ValueError(f"offset {offset} is outside the text (length {len(text)})")
    budget = max(16, int(context_length) - int(max_new_tokens))
    prefix, suffix = text[:offset], text[offset:]
    if project is not None and space is None:
        from ..guard.matcher import path_space

        space = path_space(project)
    bindings = None
    if project is not None:
        if analysis is None:
            analysis = space.analyze(prefix, list(scripts))
        bindings = space.bindings(analysis, list(scripts))
    script_path, parent_path, siblings, extra, sources = _facts(project, scripts, analysis, bindings, space)
    header = ""
    used: list[str] = []
    header_budget = int(budget * header_share)
    if script_path or parent_path or siblings or extra:
        candidate_lines = extra[:_MAX_FACTS]
        header = format_prompt_context(script_path, siblings, parent_path, [])
        if len(encode_text(tokenizer, header)) > header_budget:
            header = format_prompt_context(script_path, [], parent_path, [])
            if len(encode_text(tokenizer, header)) > header_budget:
                header = ""
        for line in candidate_lines:
            trial = header + format_prompt_context("", [], "", [line])
            if len(encode_text(tokenizer, trial)) > header_budget:
                break
            header = trial
            used.append(line)
    header_ids = encode_text(tokenizer, header)
    spec = fim_spec(tokenizer)
    use_fim = spec is not None and fim and bool(suffix.strip())
    context_ids: list[int] = []
    files: list[str] = []
    if spec is not None and spec.has_repo_context and project is not None and path:
        context_ids = repo_context_ids(spec, tokenizer, Path(project.root_dir).name or "project", [], path)
        own = repo_file_ids(spec, tokenizer, path)
        head, chosen = context_ids[: len(context_ids) - len(own)], []
        spent = len(header_ids) + len(context_ids)
        for rel, src in sources:  # whole files, while they fit the header budget
            seg = repo_file_ids(spec, tokenizer, rel, src)
            if spent + len(seg) <= header_budget:
                chosen += seg
                spent += len(seg)
                files.append(rel)
        context_ids = head + chosen + own
    suffix_ids: list[int] = []
    if use_fim:
        enc = encode_continuation if spec.family.infill_suffix else encode_text
        suffix_ids = enc(tokenizer, suffix)[: int(budget * suffix_share)]
    overhead = spec.overhead if use_fim else (1 if spec is not None and spec.bos_id is not None else 0)
    room = budget - len(context_ids) - len(header_ids) - len(suffix_ids) - overhead
    prefix_ids = (encode_continuation if header_ids else encode_text)(tokenizer, prefix)
    truncated = len(prefix_ids) > room
    if truncated:
        prefix_ids = prefix_ids[len(prefix_ids) - max(room, 0):] if room > 0 else []
    if use_fim:
        ids = spec.assemble(header_ids + prefix_ids, suffix_ids, context_ids)
    else:
        ids = ([spec.bos_id] if spec is not None and spec.bos_id is not None else []) + context_ids + header_ids + prefix_ids
    if not ids:
        bos = getattr(tokenizer, "bos_token_id", None)
        eos = getattr(tokenizer, "eos_token_id", None)
        ids = [bos if bos is not None else (eos if eos is not None else 0)]
    return Prompt(ids, header + prefix, header, truncated, use_fim, tuple(used),
                  family=spec.name if spec is not None else None, context_files=tuple(files))
