"""The baseline for ``bench/hallucination_eval.py``: a re-implementation of the kind of
validator luaguard's idea comes from, written from its description, so the difference
luaguard makes is measured rather than claimed.

What it does (and all it does):

* **tool calls**: a table of each tool's required fields (the same built-in tools as
  luaguard's); an unknown tool name or a missing/empty required field is an error; path
  fields (``path``, ``parent``, ``instancePath``) must exist, with fuzzy suggestions from
  :func:`difflib.get_close_matches` over every known path;
* **code** (files and the ``content`` of calls):
  - a substring list of placeholders (``TODO``, ``FIXME``, ``...``, ``rest of code``,
    ``your code here`` ...), checked line by line, with the vararg exception (``(...)``,
    ``{...}``, ``, ...)``, ``select("#", ...)``);
  - a bracket stack over ``() [] {}`` (string literals and ``--`` comments removed first,
    line by line);
  - three regexes for incomplete blocks: block openers (``function``, ``if``, ``do``),
    ``end``, and ``repeat``/``until``, counted over the file;
  - path existence for chains rooted at ``game``, ``workspace``, ``game:GetService("S")``
    or a local named after / bound to a service, checked against the project's instance
    paths, with fuzzy suggestions among the parent's children.

Generous additions, so the baseline is not a straw man (each is a line or two in such a
validator): it knows the Roblox service names and the set of all API member names (a
segment that is a member name, ``.Parent``/``.OnServerEvent``, ends a chain instead of
being reported), and it is given the project's instance tree as a list of paths.  It has
no parser, no scopes, no open/closed nodes, no class or property knowledge, no
``script``-relative resolution.
"""

from __future__ import annotations

import difflib
import re
from dataclasses import dataclass, field
from pathlib import Path

#: Required fields of the built-in tools (luaguard.toolcalls.schemas.BUILTIN_TOOLS).
REQUIRED_FIELDS: dict[str, tuple[str, ...]] = {
    "read_script": ("path",),
    "patch_script": ("path", "content"),
    "create_script": ("path", "content"),
    "delete_script": ("path",),
    "create_instance": ("className", "parent", "name"),
    "modify_property": ("instancePath", "property", "value"),
    "get_project_structure": (),
}
PATH_FIELDS = ("path", "parent", "instancePath")
CODE_FIELDS = ("content",)

PLACEHOLDER_SUBSTRINGS = (
    "TODO", "FIXME", "...", "rest of code", "rest of the code", "your code here", "implement this",
    "placeholder", "existing code", "same as before", "code here", "implementation here",
)
_VARARG = re.compile(r"\.\.\.\s*:|\(\s*\.\.\.\s*\)|\{\s*\.\.\.\s*\}|,\s*\.\.\.\s*[),]|\(\s*\.\.\.\s*,|select\(\s*\"#\"\s*,\s*\.\.\.")
_LONG = re.compile(r"(?:--)?\[(=*)\[.*?\]\1\]", re.S)
_STRING = re.compile(r'"(?:[^"\\]|\\.)*"|\'(?:[^\'\\]|\\.)*\'')
# The three regexes for incomplete blocks.
_OPENERS = re.compile(r"\b(?:function|if|do)\b")
_END = re.compile(r"\bend\b")
_REPEAT_UNTIL = re.compile(r"\b(repeat|until)\b")
_CHAIN = re.compile(
    r"\b(game|workspace|[A-Za-z_]\w*)"
    r"((?:\s*(?:\.\s*[A-Za-z_]\w*|:\s*(?:GetService|WaitForChild|FindFirstChild)\s*\(\s*\"[^\"]*\"[^)]*\)|\[\s*\"[^\"]*\"\s*\]))+)"
)
_SEG = re.compile(r"\.\s*([A-Za-z_]\w*)|:\s*(GetService|WaitForChild|FindFirstChild)\s*\(\s*\"([^\"]*)\"|\[\s*\"([^\"]*)\"\s*\]")
_ALIAS = re.compile(r"\blocal\s+([A-Za-z_]\w*)\s*=\s*game\s*(?::\s*GetService\s*\(\s*\"(\w+)\"\s*\)|\.\s*(\w+))\s*$")


@dataclass
class Issue:
    """One baseline finding: ``code``, 0-based ``line`` (None for a call-level issue),
    ``message``, ranked ``suggestions``."""

    code: str
    message: str
    line: int | None = None
    suggestions: list[str] = field(default_factory=list)


def _strip_line(line: str) -> str:
    """The line without string literals and its ``--`` comment (naively)."""
    line = _STRING.sub('""', line)
    i = line.find("--")
    return line if i < 0 else line[:i]


class BaselineValidator:
    """Validates tool calls and code against a project given as instance paths.

    ``tree`` maps each dotted instance path without ``game.`` (``"ReplicatedStorage.Shared"``)
    to the names of its children; ``files`` is the set of project-relative file paths;
    ``services`` and ``members`` are the Roblox service names and all API member names.
    """

    def __init__(self, tree: dict[str, list[str]], files: set[str], services: set[str], members: set[str]) -> None:
        self.tree = tree
        self.paths = sorted(tree)
        self.files = files
        self.services = services
        self.members = members

    @classmethod
    def for_project(cls, root: Path) -> "BaselineValidator":
        """Build the path list from luaguard's index of ``root`` (used only as a data source)."""
        from luaguard.project.index import load_project

        index = load_project(root)
        tree: dict[str, list[str]] = {}
        for node in index.datamodel.descendants():
            parts = []
            n = node
            while n is not None and n is not index.datamodel:
                parts.append(n.name)
                n = n.parent
            tree[".".join(reversed(parts))] = [c.name for c in node.all_children()]
        api = index.api
        members: set[str] = set()
        for c in api.class_names():
            members.update(api.members(c))
        services = {c for c in api.class_names() if api.is_service(c)}
        return cls(tree, set(index.file_instances), services, members)

    # -- tool calls ------------------------------------------------------------------
    def validate_call(self, call: dict) -> list[Issue]:
        name = call.get("name")
        args = call.get("arguments") or {}
        if name not in REQUIRED_FIELDS:
            return [Issue("unknown_tool", f"Unknown tool {name!r}")]
        issues = []
        for f in REQUIRED_FIELDS[name]:
            if args.get(f) in (None, ""):
                issues.append(Issue("missing_field", f"Missing required field {f!r}"))
        for f in PATH_FIELDS:
            v = args.get(f)
            if isinstance(v, str) and v and not self._path_exists(v, new=(name == "create_script")):
                issues.append(Issue("unknown_path", f"Path {v!r} does not exist", None, self._close_paths(v)))
        for f in CODE_FIELDS:
            v = args.get(f)
            if isinstance(v, str):
                issues.extend(self.validate_code(v))
        return issues

    def _path_exists(self, value: str, new: bool) -> bool:
        v = value.strip()
        if "/" in v or v.endswith((".lua", ".luau")):
            v = v.lstrip("./")
            if new:
                parent = v.rsplit("/", 1)[0] if "/" in v else ""
                return parent == "" or any(f.startswith(parent + "/") for f in self.files)
            return v in self.files
        if v.startswith("game."):
            v = v[5:]
        if new:
            v = v.rsplit(".", 1)[0]
        return v in self.tree or v in self.services

    def _close_paths(self, value: str) -> list[str]:
        v = value[5:] if value.startswith("game.") else value
        pool = sorted(self.files) if ("/" in v or v.endswith((".lua", ".luau"))) else self.paths
        return difflib.get_close_matches(v, pool, n=3, cutoff=0.6)

    # -- code ---------------------------------------------------------------------------
    def validate_code(self, text: str) -> list[Issue]:
        # Block comments and long strings first (kept as blank lines, so line numbers hold).
        text = _LONG.sub(lambda m: "\n" * m.group(0).count("\n"), text)
        lines = text.splitlines()
        issues: list[Issue] = []
        issues += self._placeholders(lines)
        issues += self._brackets(lines)
        issues += self._blocks(lines)
        issues += self._paths(lines)
        return issues

    def _placeholders(self, lines: list[str]) -> list[Issue]:
        out = []
        for i, line in enumerate(lines):
            line = _STRING.sub('""', line)  # text inside string literals is data
            low = line.lower()
            for s in PLACEHOLDER_SUBSTRINGS:
                if s.lower() not in low:
                    continue
                if s == "..." and _VARARG.search(line):
                    continue
                out.append(Issue("placeholder", f"Placeholder {s!r}", i))
                break
        return out

    def _brackets(self, lines: list[str]) -> list[Issue]:
        pairs = {")": "(", "]": "[", "}": "{"}
        stack: list[tuple[str, int]] = []
        for i, line in enumerate(lines):
            for ch in _strip_line(line):
                if ch in "([{":
                    stack.append((ch, i))
                elif ch in pairs:
                    if not stack or stack[-1][0] != pairs[ch]:
                        return [Issue("unbalanced_bracket", f"Unexpected {ch!r}", i)]
                    stack.pop()
        if stack:
            ch, i = stack[-1]
            return [Issue("unbalanced_bracket", f"Unclosed {ch!r}", i)]
        return []

    def _blocks(self, lines: list[str]) -> list[Issue]:
        code = [_strip_line(l) for l in lines]
        # `while ... do` / `for ... do` count once (their `do`); `elseif` is not `if`.
        opens = sum(len(_OPENERS.findall(l)) for l in code)
        ends = sum(len(_END.findall(l)) for l in code)
        ru = [m.group(1) for l in code for m in _REPEAT_UNTIL.finditer(l)]
        issues = []
        if opens > ends:
            issues.append(Issue("unclosed_block", f"{opens - ends} block(s) without 'end'", max(len(lines) - 1, 0)))
        if ru.count("repeat") > ru.count("until"):
            issues.append(Issue("unclosed_block", "'repeat' without 'until'", max(len(lines) - 1, 0)))
        return issues

    def _paths(self, lines: list[str]) -> list[Issue]:
        aliases: dict[str, str] = {}
        out = []
        for i, line in enumerate(lines):
            m = _ALIAS.search(line.split("--", 1)[0].rstrip())
            if m:
                aliases[m.group(1)] = m.group(2) or m.group(3)
            for cm in _CHAIN.finditer(line.split("--", 1)[0]):
                head, rest = cm.group(1), cm.group(2)
                segs = [(g1 or g3 or g4 or "", g2) for g1, g2, g3, g4 in _SEG.findall(rest)]
                if head == "game":
                    node = ""
                elif head == "workspace":
                    node = "Workspace"
                elif head in aliases:
                    node = aliases[head]
                elif head in self.services:
                    node = head
                else:
                    continue
                for name, method in segs:
                    if method == "GetService" or (node == "" and name in self.services):
                        if name not in self.services:
                            out.append(Issue("unknown_service", f"Unknown service {name!r}", i,
                                             difflib.get_close_matches(name, sorted(self.services), n=3, cutoff=0.6)))
                            break
                        node = name
                        continue
                    if node == "":
                        break
                    children = self.tree.get(node)
                    if children is None:
                        break
                    if name in children:
                        node = f"{node}.{name}"
                        continue
                    if name in self.members:
                        break
                    out.append(Issue("unknown_instance", f"{name!r} is not a child of {node}", i,
                                     difflib.get_close_matches(name, children, n=3, cutoff=0.6)))
                    break
        return out
