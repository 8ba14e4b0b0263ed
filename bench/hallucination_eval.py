#!/usr/bin/env python3
"""Hallucination benchmark: how much of what AI assistants get wrong does luaguard catch,
how often does it cry wolf, and how often is its "did you mean" right - side by side with
a baseline validator (``bench/baseline_validator.py``).

Usage::

    python bench/hallucination_eval.py [PROJECT_DIR] [--per-kind 150] [--seed 7] [--out bench/out]

From the project (default ``samples/place``) it builds a labelled set by injecting each
kind of hallucination into the project's real scripts and into tool calls made from the
project's real paths (see :data:`KINDS`), plus the untouched scripts and valid calls as
clean cases.  Sites are found by a small labeller of its own (tokens + the instance tree),
not by luaguard's resolver: a site is a chain segment ``.Name`` / ``["Name"]`` /
``:WaitForChild("Name")`` / ``:FindFirstChild("Name")`` after ``game``, ``workspace``,
``script``, ``game:GetService("S")`` or a local bound to ``GetService``, that names an
existing child.

Scoring, per case: *detected* when the tool reports a finding of the kind's rule family
(:data:`FAMILIES`) on the injected line (for whole-file kinds - truncation, deleted
closers - anywhere in the file), at any severity; *detected at error* counts
error-severity findings only.  luaguard reports a missing child under an **open** node
(no ``$path``, services the project does not list, Workspace) as the warning
``likely_unknown_instance`` when the name looks like a typo of a name the project knows or a
name the project has elsewhere, and as ``unverified_instance`` (a warning in patch mode, the
mode cases are linted in) when nothing in the project creates, names or reads it: both
columns are printed, and path kinds are split by the parent's open/closed state.  *top-1 / top-3*: among detected cases that have an expected
suggestion, the first / any of the first three suggestions equals the original (for
``wrong_existing``: the original location is named in the suggestions or the message).
*FP rate*: share of clean cases with an **error**-severity finding of the kind's family.

Writes ``OUT/hallucination_report.md``, ``OUT/hallucination_cases.jsonl`` and, with
matplotlib installed (``pip install -e '.[bench]'`` in this clone), ``OUT/hallucination_recall.png``.
"""

from __future__ import annotations

import argparse
import json
import random
import re
import sys
import time
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent / "server"))
sys.path.insert(0, str(HERE))

from baseline_validator import BaselineValidator  # noqa: E402

from luaguard.engine import Engine  # noqa: E402
from luaguard.luau import lexer as L  # noqa: E402
from luaguard.project.tree import is_identifier  # noqa: E402
from luaguard.toolcalls.api import validate_calls  # noqa: E402

PATH_RULES = {"unknown_instance", "likely_unknown_instance", "unverified_instance"}
SYNTAX_RULES = {"syntax_error", "unbalanced_bracket", "unclosed_block"}

#: Rule family per kind: the finding codes that count as catching it (luaguard's and the
#: baseline's names; the baseline uses the same names where it has the check).
FAMILIES: dict[str, set[str]] = {
    "path_typo_drop": PATH_RULES, "path_typo_swap": PATH_RULES, "path_typo_double": PATH_RULES,
    "path_typo_case": PATH_RULES, "path_plural_singular": PATH_RULES, "invented_child": PATH_RULES,
    "wrong_existing_path": PATH_RULES,
    "service_typo": {"unknown_service"}, "invented_service": {"unknown_service"},
    "placeholder_ellipsis_line": {"placeholder", "syntax_error"}, "placeholder_ellipsis_comment": {"placeholder"},
    "placeholder_rest_of_code": {"placeholder"}, "placeholder_your_code_here": {"placeholder"},
    "placeholder_implement": {"placeholder"}, "placeholder_angle": {"placeholder", "syntax_error"},
    "placeholder_existing_code": {"placeholder"}, "placeholder_todo": {"placeholder"}, "placeholder_fixme": {"placeholder"},
    "truncated_file": SYNTAX_RULES | {"placeholder"}, "deleted_bracket": SYNTAX_RULES, "deleted_end": SYNTAX_RULES,
    "bad_class_code": {"unknown_class"}, "bad_property_code": {"unknown_member"},
    "tool_typo": {"unknown_tool"}, "tool_invented": {"unknown_tool"}, "missing_field": {"missing_field"},
    "toolcall_path_typo": {"unknown_path"}, "toolcall_bad_class": {"unknown_class"},
    "toolcall_bad_property": {"unknown_property"},
}
KINDS = list(FAMILIES)
WHOLE_FILE = {"truncated_file", "deleted_bracket", "deleted_end"}
TOOL_KINDS = {k for k in KINDS if k.startswith(("tool", "missing_field"))}

PLACEHOLDERS: dict[str, list[str]] = {
    "placeholder_ellipsis_line": ["...", "..."],
    "placeholder_ellipsis_comment": ["-- ...", "-- ... rest of code", "--[[ ... ]]", "-- ... (existing code)"],
    "placeholder_rest_of_code": ["-- rest of the code remains the same", "-- Rest of implementation",
                                 "-- (rest of file unchanged)", "-- the rest of the function is unchanged"],
    "placeholder_your_code_here": ["-- your code here", "-- Add your logic here", "-- insert code here",
                                   "-- Your implementation goes here"],
    "placeholder_implement": ["-- implement this", "-- Implement the rest", "-- implementation omitted for brevity",
                              "-- TODO: implement"],
    "placeholder_angle": ["-- <placeholder>", "-- <insert logic here>", "<your code here>", "local CONFIG = <placeholder>"],
    "placeholder_existing_code": ["-- ... existing code ...", "-- (previous code unchanged)", "-- same as before",
                                  "-- keep existing handlers", "-- etc."],
    "placeholder_todo": ["-- TODO", "-- TODO: handle errors", "-- todo: add validation"],
    "placeholder_fixme": ["-- FIXME", "-- FIXME: race condition here", "-- XXX fix this"],
}
INVENTED_CHILDREN = ["Utils", "Helpers", "Common", "Lib", "Core", "Events", "Network", "Handlers", "Managers", "Systems",
                     "Components", "Data", "Constants", "Settings", "Main", "Client", "Server", "Shared", "Modules",
                     "Remotes", "Assets", "UI", "Controllers", "Services", "Config", "Configs", "Libraries"]
INVENTED_SERVICES = ["DataStoreServices", "InventoryService", "CombatService", "NetworkService", "PlayerDataService",
                     "RemoteService", "UIService", "SoundsService", "EventService", "GameService", "PhysicsServices",
                     "InputService", "ReplicatedStorageService", "MatchmakingServices"]
INVENTED_CLASSES = ["Button", "Label", "Cube", "Sprite", "Container", "Block", "RemoteSignal", "GuiFrame", "Text",
                    "Light", "Event", "Timer"]
INVENTED_PROPERTIES = ["Opacity", "Colour", "BackgroundColour", "Enabled2", "Rotation3D", "Velocityy", "IsVisible",
                       "TextColor", "Alpha", "ZOrder"]
#: Tool names agents invent, with the built-in each one means (None: no equivalent).
INVENTED_TOOLS = {"read_file": "read_script", "write_file": "patch_script", "edit_file": "patch_script",
                  "create_file": "create_script", "delete_file": "delete_script", "create_folder": "create_instance",
                  "set_property": "modify_property", "update_script": "patch_script", "get_script": "read_script",
                  "execute_lua": None, "run_script": None, "search_code": None, "get_children": None}
PROBE_CLASSES = ["Part", "Frame", "TextLabel", "Sound", "PointLight", "TextButton", "Model", "ParticleEmitter", "Folder"]


# -- cases ----------------------------------------------------------------------------------
@dataclass
class Case:
    """One labelled input.  ``kind`` is a key of :data:`FAMILIES` or ``"clean"`` /
    ``"clean_snippet"`` / ``"clean_call"``; ``text``+``path`` for code, ``call`` for tool
    calls; ``line`` the 0-based line the finding must be on (None: anywhere); ``expect``
    the expected best suggestion (None: not applicable); ``open_parent`` for path kinds."""

    kind: str
    path: str | None = None
    text: str | None = None
    call: dict | None = None
    line: int | None = None
    expect: str | None = None
    expect_in_message: bool = False
    open_parent: bool | None = None
    note: str = ""


@dataclass
class Site:
    """A chain segment naming an existing child: ``[start, end)`` of the name in the text."""

    start: int
    end: int
    name: str
    parent: object
    node: object
    form: str  # "dot" | "string" | "bracket"


def mutations(name: str, rng: random.Random) -> dict[str, str]:
    """Typo variants of ``name`` (kind -> mutated name), each different from ``name``."""
    out: dict[str, str] = {}
    if len(name) >= 4:
        i = rng.randrange(1, len(name))
        out["path_typo_drop"] = name[:i] + name[i + 1:]
        pairs = [j for j in range(len(name) - 1) if name[j] != name[j + 1]]
        if pairs:
            j = rng.choice(pairs)
            out["path_typo_swap"] = name[:j] + name[j + 1] + name[j] + name[j + 2:]
        k = rng.randrange(1, len(name))
        out["path_typo_double"] = name[:k] + name[k] + name[k:]
    if name[:1].isupper():
        out["path_typo_case"] = name[0].lower() + name[1:]
    elif name[:1].islower():
        out["path_typo_case"] = name[0].upper() + name[1:]
    if name.endswith("s") and len(name) > 3:
        out["path_plural_singular"] = name[:-1]
    elif name[-1:].isalpha():
        out["path_plural_singular"] = name + "s"
    return {k: v for k, v in out.items() if v != name}


class Labeller:
    """Finds injection sites in a script with its own small chain walker."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine
        self.project = engine.project
        self.api = self.project.api

    def head(self, tokens, i, aliases, script_node):
        t = tokens[i]
        if t.kind != L.NAME:
            return None, i
        if t.text == "game":
            if tokens[i + 1].kind == ":" and tokens[i + 2].text == "GetService" and tokens[i + 3].kind == "(" \
                    and tokens[i + 4].kind == L.STRING and tokens[i + 5].kind == ")":
                return self.project.service(tokens[i + 4].text[1:-1]), i + 6
            return self.project.datamodel, i + 1
        if t.text == "workspace":
            return self.project.service("Workspace"), i + 1
        if t.text == "script" and script_node is not None:
            return script_node, i + 1
        if t.text in aliases:
            return aliases[t.text], i + 1
        return None, i

    def chains(self, text: str, rel: str) -> list[list[Site]]:
        lex = L.tokenize(text)
        tokens = lex.tokens + [lex.tokens[-1]] * 6
        aliases = {}
        for m in re.finditer(r"\blocal\s+([A-Za-z_]\w*)\s*=\s*game:GetService\(\"(\w+)\"\)", text):
            node = self.project.service(m.group(2))
            if node is not None:
                aliases[m.group(1)] = node
        scripts = self.project.instances_for_file(rel)
        script_node = scripts[0] if scripts else None
        out = []
        i = 0
        while i < len(lex.tokens) - 1:
            prev = tokens[i - 1] if i else None
            if prev is not None and prev.kind in (".", ":"):
                i += 1
                continue
            node, j = self.head(tokens, i, aliases, script_node)
            if node is None:
                i += 1
                continue
            chain: list[Site] = []
            while True:
                a, b = tokens[j], tokens[j + 1]
                if a.kind == "." and b.kind == L.NAME:
                    name, s, e, form, nxt = b.text, b.start, b.end, "dot", j + 2
                elif a.kind == ":" and b.text in ("WaitForChild", "FindFirstChild") and tokens[j + 2].kind == "(" \
                        and tokens[j + 3].kind == L.STRING and tokens[j + 4].kind in (")", ","):
                    st = tokens[j + 3]
                    if tokens[j + 4].kind == "," and b.text == "FindFirstChild":
                        break  # recursive search: not a child look-up
                    name, s, e, form = st.text[1:-1], st.start + 1, st.end - 1, "string"
                    k = j + 4
                    while tokens[k].kind != ")" and tokens[k].kind != L.EOF:
                        k += 1
                    nxt = k + 1
                elif a.kind == "[" and b.kind == L.STRING and tokens[j + 2].kind == "]":
                    name, s, e, form, nxt = b.text[1:-1], b.start + 1, b.end - 1, "bracket", j + 3
                else:
                    break
                if form == "dot" and name == "Parent":
                    if node.parent is None:
                        break
                    node, j = node.parent, nxt
                    continue
                child = node.child(name)
                if child is None:
                    break
                chain.append(Site(s, e, name, node, child, form))
                node, j = child, nxt
            if chain:
                out.append(chain)
            i = max(j, i + 1)
        return out

    def services(self, text: str) -> list[tuple[int, int, str]]:
        return [(m.start(1), m.end(1), m.group(1)) for m in re.finditer(r":GetService\(\"(\w+)\"\)", text)
                if self.api.is_service(m.group(1))]

    def ok_name(self, parent, name: str, form: str) -> bool:
        """``name`` is a real hallucination under ``parent``: no such child, not a member."""
        if not name or parent.child(name) is not None:
            return False
        if self.api.member(parent.class_name, name) is not None:
            return False
        return form != "dot" or is_identifier(name)


def _line_of(text: str, offset: int) -> int:
    return text.count("\n", 0, offset)


def _blank_lines(text: str) -> list[int]:
    """Blank lines where a statement may go: not inside a comment, a (long) string or
    brackets (a table constructor or a table type spread over lines)."""
    lex = L.tokenize(text)
    spans = sorted((t.start, t.end) for t in (*lex.tokens, *lex.comments) if t.end - t.start > 1)
    depth_at: list[tuple[int, int]] = []  # (offset, bracket depth after the token there)
    depth = 0
    for t in lex.tokens:
        if t.kind in ("(", "[", "{"):
            depth += 1
        elif t.kind in (")", "]", "}"):
            depth -= 1
        depth_at.append((t.end, depth))
    lines = text.split("\n")
    out, offset, k, d = [], 0, 0, 0
    for i, line in enumerate(lines):
        while k < len(spans) and spans[k][1] <= offset:
            k += 1
        while d < len(depth_at) and depth_at[d][0] <= offset:
            d += 1
        inside = k < len(spans) and spans[k][0] < offset < spans[k][1]
        bracket_depth = depth_at[d - 1][1] if d else 0
        if not line.strip() and 0 < i < len(lines) - 1 and not inside and bracket_depth == 0:
            out.append(i)
        offset += len(line) + 1
    return out


def _insert_line(text: str, line: int, content: str) -> str:
    lines = text.split("\n")
    nxt = next((l for l in lines[line + 1:] if l.strip()), "")
    indent = nxt[: len(nxt) - len(nxt.lstrip())]
    lines[line] = indent + content
    return "\n".join(lines)


def build_cases(root: Path, engine: Engine, rng: random.Random, per_kind: int) -> list[Case]:
    project = engine.project
    api = project.api
    lab = Labeller(engine)
    files = [p for p in engine.script_files() if p.suffix in (".luau", ".lua")]
    texts = {p.relative_to(root).as_posix(): p.read_text(encoding="utf-8") for p in files}
    by_kind: dict[str, list[Case]] = defaultdict(list)

    for rel, text in texts.items():
        by_kind["clean"].append(Case("clean", rel, text))
        # -- paths ------------------------------------------------------------------------
        for chain in lab.chains(text, rel):
            for idx, site in enumerate(chain):
                line = _line_of(text, site.start)
                is_open = site.parent.is_open
                for kind, new in mutations(site.name, rng).items():
                    if lab.ok_name(site.parent, new, site.form):
                        by_kind[kind].append(Case(kind, rel, text[:site.start] + new + text[site.end:], line=line,
                                                  expect=site.name, open_parent=is_open,
                                                  note=f"{site.name} -> {new} under {site.parent.path}"))
                inv = [n for n in INVENTED_CHILDREN if lab.ok_name(site.parent, n, site.form)]
                if inv:
                    new = rng.choice(inv)
                    by_kind["invented_child"].append(Case("invented_child", rel, text[:site.start] + new + text[site.end:],
                                                          line=line, open_parent=is_open,
                                                          note=f"{site.name} -> {new} under {site.parent.path}"))
                # Wrong but existing: the next segment under a sibling of this one, or with
                # this level skipped.
                if idx + 1 < len(chain):
                    nxt = chain[idx + 1]
                    where = nxt.node.path
                    siblings = [c.name for c in site.parent.all_children()
                                if c.name != site.name and c.child(nxt.name) is None
                                and lab.ok_name(c, nxt.name, nxt.form) and (site.form != "dot" or is_identifier(c.name))]
                    if siblings:
                        sib = rng.choice(siblings)
                        by_kind["wrong_existing_path"].append(Case(
                            "wrong_existing_path", rel, text[:site.start] + sib + text[site.end:], line=line,
                            expect=where, expect_in_message=True, open_parent=site.parent.child(sib).is_open,
                            note=f"{site.name} -> sibling {sib}; {nxt.name} is at {where}"))
                    if site.form == nxt.form == "dot" and lab.ok_name(site.parent, nxt.name, "dot"):
                        # drop ".Name" of this segment: parent.Next
                        dot = text.rfind(".", 0, site.start)
                        by_kind["wrong_existing_path"].append(Case(
                            "wrong_existing_path", rel, text[:dot] + text[site.end:], line=line, expect=where,
                            expect_in_message=True, open_parent=is_open,
                            note=f"level {site.name} skipped; {nxt.name} is at {where}"))
        # -- services -----------------------------------------------------------------------
        for s, e, name in lab.services(text):
            line = _line_of(text, s)
            for kind, new in mutations(name, rng).items():
                if kind in ("path_typo_drop", "path_typo_swap", "path_typo_case") and not api.is_service(new) \
                        and not api.has_class(new):
                    by_kind["service_typo"].append(Case("service_typo", rel, text[:s] + new + text[e:], line=line,
                                                        expect=name, note=f"{name} -> {new}"))
            new = rng.choice(INVENTED_SERVICES)
            by_kind["invented_service"].append(Case("invented_service", rel, text[:s] + new + text[e:], line=line,
                                                    note=f"{name} -> {new}"))
        # -- placeholders -----------------------------------------------------------------
        blanks = _blank_lines(text)
        for kind, phrases in PLACEHOLDERS.items():
            for phrase in phrases:
                if blanks:
                    line = rng.choice(blanks)
                    by_kind[kind].append(Case(kind, rel, _insert_line(text, line, phrase), line=line, note=phrase))
        # -- truncation, deleted closers --------------------------------------------------------
        lines = text.split("\n")
        inside = [i for i in range(len(lines) - 1) if lines[i + 1][:1] in ("\t", " ") and lines[i + 1].strip()]
        for _ in range(3):
            if inside:
                i = rng.choice(inside)
                cut = "\n".join(lines[: i + 1]) + "\n"
                if rng.random() < 0.5:
                    nxt = lines[i + 1]
                    cut += nxt[: rng.randrange(len(nxt.rstrip()) - len(nxt.strip()) + 1, len(nxt.rstrip()) + 1)]
                by_kind["truncated_file"].append(Case("truncated_file", rel, cut, note=f"cut after line {i + 1}"))
        lex = L.tokenize(text)
        closers = [t for t in lex.tokens if t.kind in (")", "]", "}")]
        ends = [t for t in lex.tokens if t.kind in ("end", "until")]
        for kind, pool in (("deleted_bracket", closers), ("deleted_end", ends)):
            for t in rng.sample(pool, min(3, len(pool))):
                by_kind[kind].append(Case(kind, rel, text[:t.start] + text[t.end:], note=f"'{t.text}' at line {_line_of(text, t.start) + 1}"))
        # -- classes and properties in code (a two-line snippet at a blank line) ---------------
        for _ in range(2):
            if not blanks:
                break
            line = rng.choice(blanks)
            cls = rng.choice(PROBE_CLASSES)
            var = "probe" + cls
            good = f'local {var} = Instance.new("{cls}")'
            by_kind["clean_snippet"].append(Case("clean_snippet", rel, _insert_line(text, line, good), note=good))
            bad_names = [v for k, v in mutations(cls, rng).items() if k != "path_plural_singular"
                         and not api.has_class(v)]
            for bad in bad_names[:2] + [rng.choice([c for c in INVENTED_CLASSES if not api.has_class(c)])]:
                by_kind["bad_class_code"].append(Case("bad_class_code", rel,
                                                      _insert_line(text, line, f'local {var} = Instance.new("{bad}")'),
                                                      line=line, expect=cls if bad not in INVENTED_CLASSES else None,
                                                      note=f"{cls} -> {bad}"))
            # properties a game script may use (the API data also lists members only Roblox's
            # own scripts may touch: an assistant's typo of those is not what this measures)
            props = sorted(n for n, m in api.members(cls).items() if getattr(m, "kind", "") == "Property"
                           and (not hasattr(m, "usable") or m.usable())
                           and is_identifier(n) and not getattr(m, "deprecated", False) and n not in ("Name", "Parent"))
            if not props:
                continue
            prop = rng.choice(props)
            good2 = f"{good}\t{var}.{prop} = {var}.{prop}"
            by_kind["clean_snippet"].append(Case("clean_snippet", rel, _insert_line(text, line, good2), note=good2))
            bad_props = [v for k, v in mutations(prop, rng).items() if api.member(cls, v) is None]
            inv = [p for p in INVENTED_PROPERTIES if api.member(cls, p) is None]
            for bad in bad_props[:2] + ([rng.choice(inv)] if inv else []):
                by_kind["bad_property_code"].append(Case(
                    "bad_property_code", rel, _insert_line(text, line, f"{good}\t{var}.{bad} = nil"), line=line,
                    expect=prop if bad not in INVENTED_PROPERTIES else None, note=f"{cls}.{prop} -> {bad}"))

    # -- tool calls -----------------------------------------------------------------------------
    scripts = []
    for rel, insts in sorted(project.file_instances.items()):
        if rel in texts and insts:
            scripts.append((rel, insts[0].path.removeprefix("game.")))
    clean_calls = []
    for rel, ipath in scripts:
        clean_calls.append({"name": "read_script", "arguments": {"path": ipath}})
        clean_calls.append({"name": "read_script", "arguments": {"path": rel}})
        clean_calls.append({"name": "patch_script", "arguments": {"path": rel, "content": texts[rel]}})
        clean_calls.append({"name": "delete_script", "arguments": {"path": ipath}})
    closed_folders = [n for n in project.datamodel.descendants() if n.class_name == "Folder" and not n.is_open]
    for folder in closed_folders:
        new_name = "New" + rng.choice(["Effects", "Loot", "Stuff", "Markers"])
        if folder.child(new_name) is None:
            clean_calls.append({"name": "create_instance", "arguments": {
                "className": rng.choice(["Folder", "Part", "RemoteEvent", "Model", "StringValue"]),
                "parent": folder.path.removeprefix("game."), "name": new_name}})
    for node in project.datamodel.descendants():
        if node.class_name in ("Part", "SpawnLocation", "Frame", "TextLabel", "TextButton") and node.parent is not None:
            prop = "Anchored" if api.is_a(node.class_name, "BasePart") else "Visible"
            clean_calls.append({"name": "modify_property", "arguments": {
                "instancePath": node.path.removeprefix("game."), "property": prop, "value": True}})
    for call in clean_calls:
        by_kind["clean_call"].append(Case("clean_call", call=call))
        name, args = call["name"], call["arguments"]
        for kind, new in mutations(name, rng).items():
            if kind in ("path_typo_drop", "path_typo_swap", "path_typo_double") and new not in INVENTED_TOOLS:
                by_kind["tool_typo"].append(Case("tool_typo", call={"name": new, "arguments": args}, expect=name,
                                                 note=f"{name} -> {new}"))
        invented = [t for t, meant in INVENTED_TOOLS.items() if meant in (name, None)]
        if invented:
            t = rng.choice(invented)
            by_kind["tool_invented"].append(Case("tool_invented", call={"name": t, "arguments": args},
                                                 expect=INVENTED_TOOLS[t], note=f"{name} -> {t}"))
        for f in list(args):
            if f in ("className",) and name == "create_script":
                continue
            how = rng.choice(["drop", "empty", "null"])
            broken = dict(args)
            if how == "drop":
                del broken[f]
            else:
                broken[f] = "" if how == "empty" else None
            by_kind["missing_field"].append(Case("missing_field", call={"name": name, "arguments": broken},
                                                 note=f"{f} {how}"))
        for f in ("path", "instancePath", "parent"):
            v = args.get(f)
            if not isinstance(v, str):
                continue
            seg_re = r"[^./]+(?=\.luau$|\.lua$)" if "/" in v else r"[^.]+$"
            m = list(re.finditer(seg_re, v))
            if not m:
                continue
            seg = m[-1]
            for kind, new in mutations(seg.group(0).split(".")[0], rng).items():
                if kind == "path_plural_singular":
                    continue
                nv = v[:seg.start()] + new + v[seg.start() + len(seg.group(0).split(".")[0]):]
                by_kind["toolcall_path_typo"].append(Case("toolcall_path_typo", call={"name": name, "arguments": {**args, f: nv}},
                                                          expect=v, note=f"{v} -> {nv}"))
        if name == "create_instance":
            cls = args["className"]
            for kind, new in mutations(cls, rng).items():
                if kind != "path_plural_singular" and not api.has_class(new):
                    by_kind["toolcall_bad_class"].append(Case("toolcall_bad_class", call={"name": name, "arguments": {**args, "className": new}},
                                                              expect=cls, note=f"{cls} -> {new}"))
            by_kind["toolcall_bad_class"].append(Case("toolcall_bad_class", call={"name": name, "arguments": {
                **args, "className": rng.choice(INVENTED_CLASSES)}}, note="invented"))
        if name == "modify_property":
            prop = args["property"]
            node = project.resolve_path("game." + args["instancePath"])
            cls = node.class_name if node is not None else "Part"
            for kind, new in mutations(prop, rng).items():
                if api.member(cls, new) is None:
                    by_kind["toolcall_bad_property"].append(Case("toolcall_bad_property", call={"name": name, "arguments": {**args, "property": new}},
                                                                 expect=prop, note=f"{prop} -> {new}"))
            inv = [p for p in INVENTED_PROPERTIES if api.member(cls, p) is None]
            by_kind["toolcall_bad_property"].append(Case("toolcall_bad_property", call={"name": name, "arguments": {
                **args, "property": rng.choice(inv)}}, note="invented"))

    cases: list[Case] = []
    for kind, lst in by_kind.items():
        if kind.startswith("clean"):
            cases.extend(lst)
        else:
            cases.extend(rng.sample(lst, min(per_kind, len(lst))))
    return cases


# -- running the tools ------------------------------------------------------------------------
@dataclass
class Verdict:
    """What one tool said about one case: every finding as (code, severity, line,
    suggestions, message); severity 1 = error (LSP numbering)."""

    findings: list[tuple[str, int, int | None, list[str], str]] = field(default_factory=list)
    seconds: float = 0.0


def run_luaguard(engine: Engine, root: Path, case: Case) -> Verdict:
    t0 = time.perf_counter()
    out = Verdict()
    if case.call is not None:
        [res] = validate_calls(engine, [case.call])
        for p, sev in [(p, 1) for p in res["errors"]] + [(p, 2) for p in res["warnings"]]:
            line = p["range"]["start"]["line"] if p.get("range") else None
            out.findings.append((p["code"], sev, line, list(p["suggestions"]), p["message"]))
    else:
        for f in engine.lint_text(case.text, root / case.path, mode="patch"):
            out.findings.append((f.rule, int(f.severity), f.range.start.line, list(f.suggestions), f.message))
    out.seconds = time.perf_counter() - t0
    return out


def run_baseline(base: BaselineValidator, case: Case) -> Verdict:
    t0 = time.perf_counter()
    issues = base.validate_call(case.call) if case.call is not None else base.validate_code(case.text)
    out = Verdict([(i.code, 1, i.line, list(i.suggestions), i.message) for i in issues])
    out.seconds = time.perf_counter() - t0
    return out


def _norm(s: str) -> str:
    return s.removeprefix("game.")


def score(case: Case, verdict: Verdict) -> dict:
    fam = FAMILIES.get(case.kind, set())
    hits = [f for f in verdict.findings if f[0] in fam and (case.line is None or case.kind in WHOLE_FILE
                                                            or case.call is not None or f[2] == case.line)]
    res = {"detected": bool(hits), "detected_error": any(f[1] == 1 for f in hits), "top1": None, "top3": None}
    if hits and case.expect is not None:
        sugg = hits[0][3]
        if case.expect_in_message:
            blob = " ".join([hits[0][4], *sugg])
            res["top1"] = _norm(case.expect) in blob
            res["top3"] = res["top1"]
        else:
            norm = [_norm(s).rsplit(".", 1)[-1] if case.kind in FAMILIES and case.kind.startswith(("path_", "invented"))
                    else _norm(s) for s in sugg]
            want = _norm(case.expect)
            res["top1"] = bool(norm) and norm[0] == want
            res["top3"] = want in norm[:3]
    return res


def false_positive(kind: str, verdict: Verdict) -> bool:
    fam = FAMILIES[kind]
    return any(f[0] in fam and f[1] == 1 for f in verdict.findings)


# -- report --------------------------------------------------------------------------------
def pct(n: int, d: int) -> str:
    return "–" if d == 0 else f"{100.0 * n / d:.1f}%"


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("project", nargs="?", default=str(HERE.parent / "samples" / "place"))
    ap.add_argument("--per-kind", type=int, default=150, help="at most this many cases per kind (default 150)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--out", default=str(HERE / "out"))
    args = ap.parse_args(argv)
    root = Path(args.project).resolve()
    out_dir = Path(args.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    rng = random.Random(args.seed)

    engine = Engine(root)
    if engine.project is None:
        print(f"error: {root}: {engine.project_error or 'no project file'}", file=sys.stderr)
        return 2
    base = BaselineValidator.for_project(root)
    t0 = time.perf_counter()
    cases = build_cases(root, engine, rng, args.per_kind)
    print(f"{len(cases)} cases from {root} ({time.perf_counter() - t0:.1f} s to build)")

    stats = defaultdict(lambda: defaultdict(int))
    clean_verdicts: dict[str, list[tuple[Verdict, Verdict]]] = defaultdict(list)
    t_lg = t_bl = 0.0
    with open(out_dir / "hallucination_cases.jsonl", "w", encoding="utf-8") as fh:
        for case in cases:
            vl = run_luaguard(engine, root, case)
            vb = run_baseline(base, case)
            t_lg += vl.seconds
            t_bl += vb.seconds
            if case.kind.startswith("clean"):
                clean_verdicts[case.kind].append((vl, vb))
                fh.write(json.dumps({"kind": case.kind, "path": case.path, "note": case.note,
                                     "luaguard_errors": [f[:3] for f in vl.findings if f[1] == 1],
                                     "baseline": [f[:3] for f in vb.findings]}) + "\n")
                continue
            sl, sb = score(case, vl), score(case, vb)
            st = stats[case.kind]
            st["n"] += 1
            for tool, s in (("lg", sl), ("bl", sb)):
                st[f"{tool}_det"] += s["detected"]
                st[f"{tool}_err"] += s["detected_error"]
                if s["top1"] is not None:
                    st[f"{tool}_sug_n"] += 1
                    st[f"{tool}_top1"] += s["top1"]
                    st[f"{tool}_top3"] += s["top3"]
            if case.open_parent is not None:
                key = "open" if case.open_parent else "closed"
                st[f"n_{key}"] += 1
                st[f"lg_det_{key}"] += sl["detected"]
                st[f"bl_det_{key}"] += sb["detected"]
            fh.write(json.dumps({"kind": case.kind, "path": case.path, "line": case.line, "note": case.note,
                                 "open_parent": case.open_parent, "luaguard": sl, "baseline": sb,
                                 "luaguard_findings": [f[:4] for f in vl.findings][:6],
                                 "baseline_findings": [f[:4] for f in vb.findings][:6]}) + "\n")

    def clean_set(kind: str) -> str:
        return "clean_call" if kind in TOOL_KINDS else "clean"

    lines_out = []
    header = ("| kind | n | luaguard recall | at error | top-1 | top-3 | FP rate | baseline recall | top-1 | top-3 | FP rate |\n"
              "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    lines_out.append(header)
    total = defaultdict(int)
    for kind in KINDS:
        st = stats.get(kind)
        if not st:
            continue
        cv = clean_verdicts[clean_set(kind)]
        fp_lg = sum(false_positive(kind, a) for a, _ in cv)
        fp_bl = sum(false_positive(kind, b) for _, b in cv)
        lines_out.append(
            f"| {kind} | {st['n']} | {pct(st['lg_det'], st['n'])} | {pct(st['lg_err'], st['n'])} | "
            f"{pct(st['lg_top1'], st['lg_sug_n'])} | {pct(st['lg_top3'], st['lg_sug_n'])} | {pct(fp_lg, len(cv))} | "
            f"{pct(st['bl_det'], st['n'])} | {pct(st['bl_top1'], st['bl_sug_n'])} | {pct(st['bl_top3'], st['bl_sug_n'])} | "
            f"{pct(fp_bl, len(cv))} |")
        for k in ("n", "lg_det", "lg_err", "bl_det", "lg_sug_n", "lg_top1", "lg_top3", "bl_sug_n", "bl_top1", "bl_top3"):
            total[k] += st[k]
    lines_out.append(
        f"| **all kinds** | {total['n']} | {pct(total['lg_det'], total['n'])} | {pct(total['lg_err'], total['n'])} | "
        f"{pct(total['lg_top1'], total['lg_sug_n'])} | {pct(total['lg_top3'], total['lg_sug_n'])} | | "
        f"{pct(total['bl_det'], total['n'])} | {pct(total['bl_top1'], total['bl_sug_n'])} | "
        f"{pct(total['bl_top3'], total['bl_sug_n'])} | |")

    split = ["| path kind | closed parent: n | luaguard | baseline | open parent: n | luaguard | baseline |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for kind in KINDS:
        st = stats.get(kind)
        if st and (st["n_open"] or st["n_closed"]):
            split.append(f"| {kind} | {st['n_closed']} | {pct(st['lg_det_closed'], st['n_closed'])} | "
                         f"{pct(st['bl_det_closed'], st['n_closed'])} | {st['n_open']} | "
                         f"{pct(st['lg_det_open'], st['n_open'])} | {pct(st['bl_det_open'], st['n_open'])} |")

    clean_lines = ["| clean set | n | luaguard: any error | baseline: any finding |", "|---|---:|---:|---:|"]
    for ck, cv in sorted(clean_verdicts.items()):
        clean_lines.append(f"| {ck} | {len(cv)} | {pct(sum(any(f[1] == 1 for f in a.findings) for a, _ in cv), len(cv))} | "
                           f"{pct(sum(bool(b.findings) for _, b in cv), len(cv))} |")

    n_cases = len(cases)
    report = "\n".join([
        f"# Hallucination benchmark: {root.name}",
        "",
        f"{n_cases} cases ({sum(len(v) for v in clean_verdicts.values())} clean), seed {args.seed}, "
        f"at most {args.per_kind} per kind. luaguard {1000 * t_lg / n_cases:.2f} ms per case, "
        f"baseline {1000 * t_bl / n_cases:.2f} ms.",
        "",
        "Recall counts a finding of the kind's rule family on the injected line (anywhere for "
        "truncated files and deleted closers) at **any severity**; *at error* counts error "
        "severity only (luaguard warns `likely_unknown_instance` under open nodes). top-1/top-3: "
        "of detected cases with a known original. FP rate: clean cases (untouched scripts for "
        "code kinds, valid calls for tool-call kinds) with an **error** of the kind's family.",
        "",
        *lines_out,
        "",
        "## Path kinds by the parent's state",
        "",
        *split,
        "",
        "## Clean cases",
        "",
        *clean_lines,
        "",
        "Rule families: " + "; ".join(f"`{k}`: {', '.join(sorted(v))}" for k, v in FAMILIES.items()) + ".",
        "",
    ])
    (out_dir / "hallucination_report.md").write_text(report, encoding="utf-8")
    print(report)
    chart(stats, out_dir / "hallucination_recall.png")
    return 0


def chart(stats, path: Path) -> None:
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("matplotlib is not installed (pip install -e '.[bench]' in this clone): no chart written")
        return
    kinds = [k for k in KINDS if stats.get(k)]
    lg = [100.0 * stats[k]["lg_det"] / stats[k]["n"] for k in kinds]
    bl = [100.0 * stats[k]["bl_det"] / stats[k]["n"] for k in kinds]
    fig, ax = plt.subplots(figsize=(10, 0.32 * len(kinds) + 1.5))
    y = range(len(kinds))
    ax.barh([i + 0.2 for i in y], lg, height=0.4, label="luaguard", color="#2b7bba")
    ax.barh([i - 0.2 for i in y], bl, height=0.4, label="baseline", color="#bbbbbb")
    ax.set_yticks(list(y))
    ax.set_yticklabels(kinds, fontsize=8)
    ax.invert_yaxis()
    ax.set_xlabel("recall (%)")
    ax.set_xlim(0, 100)
    ax.legend(loc="upper center", bbox_to_anchor=(0.5, -0.05), ncol=2, frameon=False)
    ax.set_title("Hallucinations caught, by kind")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    print(f"chart written to {path}")


if __name__ == "__main__":
    sys.exit(main())
