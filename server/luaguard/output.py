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
#: Where a rule's documentation page (``docs/rules/ID.md``, generated from its module of
#: :mod:`luaguard.rules`) is published: SARIF's ``helpUri``.
RULE_DOCS_URL = "https://github.com/luaguard/luaguard/blob/main/docs/rules/{id}.md"

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
    """One workflow command per finding, errors first, then warnings, then the rest (each
    group in the order given); ``path_of`` gives its repository-relative path."""
    return [github_annotation(f, path_of(f)) for f in sorted(findings, key=lambda f: f.severity)]


#: GitHub Actions shows at most this many annotations of each level (error, warning) per step
#: and drops the rest without a word (GitHub's documentation of workflow commands and its
#: "annotations" limits: 10 errors and 10 warnings per step, 50 per job)
GITHUB_SHOWN_PER_LEVEL = 10
#: GitHub's limit on one step's job summary (1 MiB); the summary stops listing findings
#: well before it
STEP_SUMMARY_BYTES = 900_000


def counts_text(findings: Sequence[Finding]) -> str:
    """``"3 errors, 1 warning"`` (``"no problems"`` when empty)."""
    from collections import Counter

    counts = Counter(f.severity for f in findings)
    parts = []
    for sev in Severity:
        n = counts.get(sev, 0)
        if n:
            parts.append(f"{n:,} {sev.label}{'s' if n != 1 and sev is not Severity.INFORMATION else ''}")
    return ", ".join(parts) or "no problems"


def github_summary_line(findings: Sequence[Finding], files: int, *, summary_file: bool, scope: str = "") -> str:
    """The one line printed after the annotations: the counts, and when GitHub will not show
    them all, how many it shows and where the rest are (the job summary, when written)."""
    plural = "s" if files != 1 else ""
    if not findings:
        return f"luaguard: no problems found in {files:,} file{plural}{scope}."
    touched = len({f.file for f in findings})
    where = f"in {touched:,} of {files:,} file{plural}{scope}"
    line = f"luaguard: {counts_text(findings)} {where}."
    over = [sev for sev in (Severity.ERROR, Severity.WARNING)
            if sum(1 for f in findings if f.severity is sev) > GITHUB_SHOWN_PER_LEVEL]
    if over:
        line += (f" GitHub shows only the first {GITHUB_SHOWN_PER_LEVEL} "
                 + " and ".join(f"{s.label}s" for s in over) + " of a step as annotations; "
                 + ("the job summary lists all of them." if summary_file else
                    "the step's log shows all of them (and --format sarif)."))
    return line


def _md(s: str) -> str:
    """``s`` as Markdown inline text: Markdown and HTML characters escaped, line breaks as
    ``<br>``."""
    out = []
    for c in s:
        if c in "\\`*_[]<>|#~":
            out.append("\\" + c)
        elif c == "&":
            out.append("&amp;")
        elif c in "\r\n":
            out.append("<br>")
        else:
            out.append(c)
    return "".join(out).replace("<br><br>", "<br>")


def github_step_summary(findings: Sequence[Finding], path_of: Callable[[Finding], str], files: int,
                        *, scope: str = "", env: dict | None = None) -> str:
    """The Markdown job summary (GitHub's ``$GITHUB_STEP_SUMMARY``): a heading with the
    counts, how many annotations GitHub shows, a table by rule, then every finding as a list
    item (errors first) with a link to its line when ``GITHUB_SERVER_URL``, ``GITHUB_REPOSITORY`` and
    ``GITHUB_SHA`` are set; listing stops before :data:`STEP_SUMMARY_BYTES`, saying how many
    were left out."""
    from collections import Counter

    env = os.environ if env is None else env
    touched = len({path_of(f) for f in findings})
    head = [f"## luaguard: {counts_text(findings)}" + (f" in {touched:,} of {files:,} file{'s' if files != 1 else ''}"
                                                      if findings else f" in {files:,} file{'s' if files != 1 else ''}")
            + _md(scope), ""]
    if not findings:
        return "\n".join(head) + "\n"
    by_level = Counter(f.severity for f in findings)
    hidden = [(by_level[s] - GITHUB_SHOWN_PER_LEVEL, s) for s in (Severity.ERROR, Severity.WARNING)
              if by_level[s] > GITHUB_SHOWN_PER_LEVEL]
    if hidden:
        head += [f"GitHub shows {GITHUB_SHOWN_PER_LEVEL} error and {GITHUB_SHOWN_PER_LEVEL} warning annotations per "
                 f"step: " + " and ".join(f"{n:,} {s.label}{'s' if n != 1 else ''}" for n, s in hidden)
                 + f" of these {len(findings):,} findings are not shown on the files. All are listed below.", ""]
    rules = Counter((f.severity, f.rule) for f in findings)
    safe = Counter(f.rule for f in findings if f.fix is not None and f.fix.safe)
    unsafe = Counter(f.rule for f in findings if f.fix is not None and not f.fix.safe)
    head += ["| severity | rule | findings | fixable |", "|---|---|--:|---|"]
    for (sev, rule), n in sorted(rules.items(), key=lambda kv: (kv[0][0], -kv[1], kv[0][1])):
        fixes = ([f"{safe[rule]:,} with `--fix`"] if safe[rule] else []) + \
                ([f"{unsafe[rule]:,} with `--fix --unsafe-fixes`"] if unsafe[rule] else [])
        head.append(f"| {sev.label} | `{rule}` | {n:,} | {', '.join(fixes)} |")
    base = None
    if env.get("GITHUB_SERVER_URL") and env.get("GITHUB_REPOSITORY") and env.get("GITHUB_SHA"):
        base = f"{env['GITHUB_SERVER_URL'].rstrip('/')}/{env['GITHUB_REPOSITORY']}/blob/{env['GITHUB_SHA']}/"
    body = ["", "### Every finding, errors first", ""]
    size = sum(len(x) + 1 for x in head + body)
    icon = {Severity.ERROR: "error", Severity.WARNING: "warning", Severity.INFORMATION: "note", Severity.HINT: "hint"}
    listed = 0
    ordered = sorted(findings, key=lambda f: f.severity)
    for f in ordered:
        path = path_of(f)
        where = f"{path}:{f.range.start.line + 1}:{f.range.start.character + 1}"
        cell = f"[{_md(where)}]({base}{quote(path)}#L{f.range.start.line + 1})" if base and not path.startswith("/") else _md(where)
        row = f"- **{icon[f.severity]}** `{f.rule}` {cell}: {_md(f.message)}"
        if f.fix is not None:
            row += f"<br>fix{'' if f.fix.safe else ' (unsafe)'}: {_md(f.fix.title or f.fix.new_text)}"
        if size + len(row.encode("utf-8")) + 1 > STEP_SUMMARY_BYTES - 200:  # (room for the closing note)
            break
        body.append(row)
        size += len(row.encode("utf-8")) + 1
        listed += 1
    if listed < len(ordered):
        body += ["", f"... and {len(ordered) - listed:,} more (GitHub's job summary holds 1 MiB): run `luaguard check` "
                     f"locally, or use `--format sarif` for code scanning."]
    return "\n".join(head + body) + "\n"


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
    registry's order, then any other id met in the findings).  A rule of
    :mod:`luaguard.rules` gets its ``help`` (the rule's documentation page as Markdown) and
    ``helpUri`` (that page in the repository, :data:`RULE_DOCS_URL`)."""
    from .rules.registry import get_rule

    out = []
    for rule in rule_ids:
        r = get_rule(rule)
        if r is None:
            short, help_text = f"luaguard rule {rule}", "See the message of each finding."
        else:
            short, help_text = r.short, r.help
        level = _SARIF_LEVEL[r.severity if r is not None else Severity.ERROR]
        entry = {
            "id": rule,
            "name": "".join(part.capitalize() for part in rule.split("_")),
            "shortDescription": {"text": short},
            "fullDescription": {"text": f"{short}. {help_text}"},
            "help": {"text": help_text, "markdown": r.docs.strip() if r is not None and r.docs
                     else f"**{rule}**: {short}.\n\n{help_text}"},
            "defaultConfiguration": {"level": level},
        }
        if r is not None:
            entry["helpUri"] = RULE_DOCS_URL.format(id=rule)
        out.append(entry)
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
