"""``.luaurc``: the Luau configuration luau-analyze and luau-lsp read - the one reader of it.

Format and resolution follow luau-lang/luau (``Config/src/Config.cpp`` ``parseConfig``,
``CLI/src/Analyze.cpp`` ``readConfigRec``): a JSON object (luau-lsp also accepts ``//``
comments and trailing commas, so this reader does) whose keys are

* ``languageMode``: ``"strict"``, ``"nonstrict"`` or ``"nocheck"``;
* ``globals``: a list of names defined outside the code (test frameworks, a host's globals);
* ``aliases``: ``{"name": "path"}`` for string requires ``require("@name/x")``; a path is
  relative to the ``.luaurc``'s own directory; alias names are case-insensitive;
* ``lint``, ``lintErrors``, ``typeErrors`` (read by Luau's own linter; not used here).

The configuration of a directory is its parent's with the directory's ``.luaurc`` applied
on top: ``languageMode`` and each alias of the nearer file win, ``globals`` add up.  Luau
walks up to the file system's root; luaguard stops at the project root - nothing outside it
is read (the repository is untrusted input: :mod:`luaguard.files` reads, bounded, no link
out of the root).  An alias whose path leads outside the root (``~/.lune/...``, an absolute
path, ``../..``) is left out: a host defines it, and requires through it are not judged.
``luaguard.toml`` overrides: ``luaurc = false`` ignores ``.luaurc`` files, ``language_mode``
sets the mode, ``extra_globals`` adds globals.

A malformed file adds nothing and is named in :attr:`LuaurcReader.problems`.
"""

from __future__ import annotations

import json
import posixpath
import re
from dataclasses import dataclass, field
from pathlib import Path
from types import MappingProxyType
from typing import Mapping

CONFIG_NAME = ".luaurc"
#: the language modes Luau knows (``Config.cpp`` ``parseModeString``)
LANGUAGE_MODES = ("strict", "nonstrict", "nocheck")
#: ``.luaurc`` files larger than this are not read (bytes)
MAX_BYTES = 1_000_000

_LINE_COMMENT = re.compile(r"//[^\n]*")
_TRAILING_COMMA = re.compile(r",(\s*[}\]])")


@dataclass(frozen=True)
class LuauConfig:
    """The Luau configuration one directory sees.

    ``language_mode``: one of :data:`LANGUAGE_MODES` or ``None`` (none set: Luau's default,
    ``nonstrict``); ``globals``: extra global names; ``aliases``: ``{alias (lower-case, no
    "@"): (root-relative target directory, the .luaurc that defines it)}``; ``files``: the
    ``.luaurc`` files applied, root first (root-relative); ``lint``: the ``"lint"`` settings
    applied, root first and each file's in its order, as ``(name, enabled)`` (``"*"``: every
    lint) - see :meth:`lint_disabled`."""

    language_mode: str | None = None
    globals: frozenset[str] = frozenset()
    aliases: Mapping[str, tuple[str, str]] = field(default_factory=lambda: MappingProxyType({}))
    files: tuple[str, ...] = ()
    lint: tuple[tuple[str, bool], ...] = ()

    def lint_disabled(self, name: str) -> bool:
        """Is Luau's lint ``name`` (``UnknownGlobal``) turned off here?  Luau reads a
        ``.luaurc``'s ``"lint"`` object over the configuration it inherits, key by key:
        ``"*"`` sets every lint, a name sets one (luau-lang/luau ``Config.cpp``,
        ``parseLintRuleString``); the last setting that names ``name`` or ``"*"`` wins.  Not
        set: on (Luau's default for the lints luaguard maps)."""
        for key, enabled in reversed(self.lint):
            if key == name or key == "*":
                return not enabled
        return False


EMPTY = LuauConfig()


class LuaurcReader:
    """Reads and caches the ``.luaurc`` files of the project at ``root`` (``None``: no
    project, every directory gets :data:`EMPTY`).  Not thread-safe; cheap to keep per
    project (one parse per directory that has a file)."""

    def __init__(self, root: Path | str | None) -> None:
        self.root = Path(root) if root is not None else None
        self._dirs: dict[str, LuauConfig] = {}
        #: ``"path: why"`` for each ``.luaurc`` that could not be used
        self.problems: list[str] = []

    def for_file(self, rel: str | None) -> LuauConfig:
        """The configuration of the root-relative file ``rel`` (its directory's)."""
        if rel is None or self.root is None:
            return EMPTY
        return self.for_dir(posixpath.dirname(rel))

    def for_dir(self, rel_dir: str) -> LuauConfig:
        """The configuration of the root-relative directory ``rel_dir`` (``""``: the root);
        :data:`EMPTY` for a path outside the root."""
        if self.root is None:
            return EMPTY
        rel_dir = posixpath.normpath(rel_dir) if rel_dir else ""
        if rel_dir == ".":
            rel_dir = ""
        if rel_dir.startswith("../") or rel_dir == ".." or rel_dir.startswith("/"):
            return EMPTY
        got = self._dirs.get(rel_dir)
        if got is not None:
            return got
        base = self.for_dir(posixpath.dirname(rel_dir)) if rel_dir else EMPTY
        where = posixpath.join(rel_dir, CONFIG_NAME) if rel_dir else CONFIG_NAME
        data = self._load(where)
        got = _apply(base, data, rel_dir, where) if data is not None else base
        self._dirs[rel_dir] = got
        return got

    def _load(self, where: str) -> dict | None:
        from ..files import read_text, regular_file

        path = self.root / where
        try:
            if not regular_file(path):
                return None
            text = read_text(path, root=self.root, limit=MAX_BYTES, errors="strict")
        except (OSError, ValueError) as exc:
            self.problems.append(f"{where}: cannot read: {getattr(exc, 'why', None) or exc}")
            return None
        try:
            data = json.loads(_TRAILING_COMMA.sub(r"\1", _LINE_COMMENT.sub("", text)))
        except ValueError as exc:
            self.problems.append(f"{where}: not valid JSON: {exc}")
            return None
        if not isinstance(data, dict):
            self.problems.append(f"{where}: expected a JSON object")
            return None
        return data


def _apply(base: LuauConfig, data: dict, rel_dir: str, where: str) -> LuauConfig:
    mode = data.get("languageMode")
    mode = mode if mode in LANGUAGE_MODES else base.language_mode
    names = data.get("globals")
    globals_ = base.globals | frozenset(n for n in names if isinstance(n, str) and n) if isinstance(names, list) \
        else base.globals
    aliases = dict(base.aliases)
    raw = data.get("aliases")
    if isinstance(raw, dict):
        for key, value in raw.items():
            if not (isinstance(key, str) and key and isinstance(value, str)):
                continue
            name = key.lower().lstrip("@")
            target = None
            if not value.startswith(("/", "~", "\\")) and not re.match(r"^[A-Za-z]:", value):
                target = posixpath.normpath(posixpath.join(rel_dir, value))
                if target == ".." or target.startswith("../"):
                    target = None
            if target is None:
                aliases.pop(name, None)  # a host's path (outside the project): not judged
            else:
                aliases[name] = ("" if target == "." else target, where)
    lint = base.lint
    raw_lint = data.get("lint")
    if isinstance(raw_lint, dict):
        lint = (*lint, *((k, v) for k, v in raw_lint.items() if isinstance(k, str) and isinstance(v, bool)))
    return LuauConfig(mode, globals_, MappingProxyType(aliases), (*base.files, where), lint)


def header_mode(lex) -> str | None:
    """The language mode a file's header hot comment sets (``--!strict``, ``--!nonstrict``,
    ``--!nocheck`` before the first token: Luau's ``parseMode`` reads header hot comments
    only), or ``None``.  ``lex``: the file's :class:`~luaguard.luau.lexer.LexResult`."""
    first = lex.tokens[0].start if lex.tokens else 0
    for c in lex.comments:
        if c.start >= first:
            break
        if c.text.startswith("--!"):
            word = c.text[3:].strip()
            if word in LANGUAGE_MODES:
                return word
    return None
