"""Output formats of ``luaguard check`` for CI: GitHub Actions workflow commands and SARIF.

(The text format is :func:`luaguard.findings.format_text`, JSON is
:meth:`luaguard.findings.Finding.to_json`.)  Both CI formats name files relative to the
repository root (:func:`repository_root`), which is what GitHub resolves annotation and code
scanning paths against, whatever directory luaguard ran in.

* ``github``: one ``::error|warning|notice file=...,line=...,col=...,endLine=...,endColumn=...,title=...::message``
  line per finding (GitHub's "workflow commands for GitHub Actions"; ``%``, CR, LF escaped in
  the message, and also ``:`` and ``,`` in property values).  Lines and columns are 1-based;
  columns count UTF-16 code units, as findings do.
* ``sarif``: one SARIF 2.1.0 log (OASIS "Static Analysis Results Interchange Format" 2.1.0):
  ``runs[0].tool.driver.rules`` describes every rule (short description, help text, default
  level); each result has its rule, level, message, a physical location with a region
  (``columnKind`` ``utf16CodeUnits``, SARIF's default unit), a line-insensitive
  ``partialFingerprints`` entry (so code scanning tracks a finding across edits above it) and,
  when the finding carries a fix, a SARIF ``fix`` with its replacement and whether it is safe.
"""

from __future__ import annotations

import hashlib
import os
from urllib.parse import quote
from pathlib import Path
from typing import Callable, Iterable, Sequence

from . import __version__
from .findings import Finding, Range, Severity

SARIF_SCHEMA = "https://json.schemastore.org/sarif-2.1.0.json"

_GITHUB_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "notice", Severity.HINT: "notice"}
_SARIF_LEVEL = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "note"}


def repository_root(start: Path | None = None) -> Path:
    """The directory CI paths are relative to: ``$GITHUB_WORKSPACE`` when set (GitHub
    Actions' checkout), else the nearest directory at or above ``start`` (default: the
    current directory) holding ``.git``, else ``start`` itself."""
    start = Path(os.path.abspath(start or Path.cwd()))
    workspace = os.environ.get("GITHUB_WORKSPACE")
    if workspace and Path(workspace).is_dir():
        return Path(os.path.abspath(workspace))
    for d in (start, *start.parents):
        if (d / ".git").exists():
            return d
    return start


def relative_to_root(path: str | Path, root: Path) -> str:
    """``path`` (absolute, or relative to the current directory) as a POSIX path relative
    to ``root``; unchanged (as POSIX) when it lies outside ``root``."""
    p = Path(os.path.abspath(path))
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()


# -- GitHub Actions -------------------------------------------------------------------
def _escape_data(s: str) -> str:
    return s.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _escape_property(s: str) -> str:
    return _escape_data(s).replace(":", "%3A").replace(",", "%2C")


def github_annotation(f: Finding, path: str) -> str:
    """The workflow command for one finding; ``path`` is relative to the repository root."""
    r = f.range
    props = [
        f"file={_escape_property(path)}",
        f"line={r.start.line + 1}",
        f"col={r.start.character + 1}",
        f"endLine={r.end.line + 1}",
        f"endColumn={r.end.character + 1}",
        f"title={_escape_property(f'luaguard ({f.rule})')}",
    ]
    message = f.message
    if f.fix is not None:
        message += f"\nfix{'' if f.fix.safe else ' (unsafe)'}: {f.fix.title or f.fix.new_text}"
    return f"::{_GITHUB_LEVEL[f.severity]} {','.join(props)}::{_escape_data(message)}"


def github_lines(findings: Iterable[Finding], path_of: Callable[[Finding], str]) -> list[str]:
    """One workflow command per finding; ``path_of`` gives its repository-relative path."""
    return [github_annotation(f, path_of(f)) for f in findings]


# -- SARIF 2.1.0 ----------------------------------------------------------------------
def _region(r: Range) -> dict:
    return {
        "startLine": r.start.line + 1,
        "startColumn": r.start.character + 1,
        "endLine": r.end.line + 1,
        "endColumn": r.end.character + 1,
    }


def _fingerprint(f: Finding, path: str, key: tuple[str, str, str] | None) -> str:
    from .introduced import finding_key

    k = key if key is not None else finding_key(f, None)
    return hashlib.sha256("\x00".join((path, *k)).encode("utf-8")).hexdigest()[:32]


def sarif_rules(rule_ids: Sequence[str]) -> list[dict]:
    """``reportingDescriptor`` objects for ``rule_ids`` (known rules first, in the
    registry's order, then any other id met in the findings)."""
    from .checks.registry import rule_help
    from .config import known_rule_ids

    known = known_rule_ids()
    out = []
    for rule in rule_ids:
        h = rule_help(rule)
        level = _SARIF_LEVEL[known.get(rule, Severity.ERROR)]
        out.append({
            "id": rule,
            "name": "".join(part.capitalize() for part in rule.split("_")),
            "shortDescription": {"text": h.short},
            "fullDescription": {"text": f"{h.short}. {h.help}"},
            "help": {"text": h.help, "markdown": f"**{rule}**: {h.short}.\n\n{h.help}"},
            "defaultConfiguration": {"level": level},
        })
    return out


def sarif_log(findings: Sequence[Finding], path_of: Callable[[Finding], str], root: Path,
              key_of: Callable[[Finding], tuple[str, str, str] | None] = lambda f: None) -> dict:
    """A SARIF 2.1.0 log of ``findings``.  ``path_of`` gives each finding's path relative
    to ``root`` (the repository root, ``%SRCROOT%``); ``key_of`` its line-insensitive key
    (:func:`luaguard.introduced.finding_key`) for ``partialFingerprints``."""
    from .config import known_rule_ids

    ids = list(known_rule_ids())
    for f in findings:
        if f.rule not in ids:
            ids.append(f.rule)
    index = {rule: i for i, rule in enumerate(ids)}
    results = []
    for f in findings:
        path = path_of(f)
        if path.startswith("/"):  # outside the repository
            location = {"uri": Path(path).as_uri()}
        else:
            location = {"uri": quote(path), "uriBaseId": "%SRCROOT%"}
        result = {
            "ruleId": f.rule,
            "ruleIndex": index[f.rule],
            "level": _SARIF_LEVEL[f.severity],
            "message": {"text": f.message},
            "locations": [{"physicalLocation": {"artifactLocation": location, "region": _region(f.range)}}],
            "partialFingerprints": {"luaguardFindingKey/v1": _fingerprint(f, path, key_of(f))},
        }
        if f.suggestions:
            result["properties"] = {"suggestions": list(f.suggestions)}
        if f.fix is not None:
            result["fixes"] = [{
                "description": {"text": f.fix.title or f"Replace with '{f.fix.new_text}'"},
                "artifactChanges": [{
                    "artifactLocation": dict(location),
                    "replacements": [{"deletedRegion": _region(f.fix.range), "insertedContent": {"text": f.fix.new_text}}],
                }],
                "properties": {"safe": f.fix.safe},
            }]
        results.append(result)
    return {
        "$schema": SARIF_SCHEMA,
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "luaguard",
                "version": __version__,
                "semanticVersion": __version__,
                "rules": sarif_rules(ids),
            }},
            "originalUriBaseIds": {"%SRCROOT%": {"uri": root.as_uri() + "/"}},
            "columnKind": "utf16CodeUnits",
            "results": results,
        }],
    }
