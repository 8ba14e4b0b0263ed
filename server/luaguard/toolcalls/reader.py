"""Read tool calls from text or parsed JSON into :class:`~.model.Batch` lists.

Accepted input (one JSON value, several concatenated values, or JSONL):

* one call: ``{"name", "arguments"}`` (also ``args``/``input``/``parameters``/``params``;
  ``tool``/``tool_name`` for the name), an OpenAI tool call ``{"id", "type": "function",
  "function": {"name", "arguments"}}``, an Anthropic ``{"type": "tool_use", "name",
  "input"}`` block, an MCP ``tools/call`` request (``{"method": "tools/call", "params":
  {...}}``); ``arguments`` may be an object or a JSON string; an optional ``confidence``
  sits next to the name or inside the arguments;
* an array of calls or messages (a sequence);
* an OpenAI assistant message with ``tool_calls`` (or legacy ``function_call``), a chat
  completion (``choices[].message``), an Anthropic message (``content`` with
  ``tool_use`` blocks): a sequence;
* a plan: ``{"steps": [...]}`` (or ``{"plan": ...}``, or an array whose items carry
  ``depends_on``), each step a call with ``id`` and ``depends_on`` (also ``dependsOn``),
  or ``{"id", "depends_on", "call": {...}}``;
* the sample-file wrapper ``{"call": <any of the above>, "expect": ...}``.

Invalid JSON is reported with its line and column (``invalid_json``) and reading goes on
at the next line that starts a new value (for JSONL: the next line); a value of an
unknown shape becomes ``invalid_call``.  Nothing here raises on any input.
"""

from __future__ import annotations

import json
import re
from typing import Any

from .model import (
    INVALID_ARGUMENT,
    INVALID_CALL,
    INVALID_JSON,
    Batch,
    CallRecord,
    Problem,
)

_DECODER = json.JSONDecoder()
_WS = re.compile(r"[ \t\r\n]*")
_NEW_VALUE = re.compile(r"^[\[{]", re.M)
#: How many wrapper levels (``{"call": {"call": ...}}``, nested arrays) are unwrapped.
MAX_WRAPPING = 8

_NAME_KEYS = ("name", "tool", "tool_name", "toolName")
_ARG_KEYS = ("arguments", "args", "input", "parameters", "params")
_DEP_KEYS = ("depends_on", "dependsOn", "deps", "after")


class _Counter:
    def __init__(self) -> None:
        self.n = 0

    def next(self) -> int:
        self.n += 1
        return self.n - 1


def read_calls(data: Any) -> list[Batch]:
    """Batches from ``data``: ``str``/``bytes`` are parsed as JSON text (see the module
    docstring); any other value is taken as already-parsed JSON."""
    counter = _Counter()
    if isinstance(data, (bytes, bytearray)):
        text = bytes(data).decode("utf-8-sig", errors="replace")
        return _read_text(text, counter)
    if isinstance(data, str):
        return _read_text(data.lstrip("\ufeff"), counter)
    return [_batch(data, None, counter, 0)]


def _line_of(text: str, pos: int, line_starts: list[int]) -> int:
    import bisect

    return bisect.bisect_right(line_starts, pos)


def _looks_like_jsonl(text: str) -> bool:
    """Several non-blank lines, none indented and none a lone closing bracket: JSON Lines
    (each line is read on its own, so an error never swallows the next line)."""
    lines = [ln for ln in text.splitlines() if ln.strip()]
    return len(lines) > 1 and all(not ln[0].isspace() and ln[0] not in "}]" for ln in lines)


def _read_jsonl(text: str, counter: _Counter) -> list[Batch]:
    batches: list[Batch] = []
    for n, raw in enumerate(text.splitlines(), 1):
        if not raw.strip():
            continue
        try:
            value = json.loads(raw)
        except json.JSONDecodeError as exc:
            msg = _json_msg(exc)
            if exc.pos >= len(raw.rstrip()):
                msg += " (the line ends before the JSON value does)"
            batches.append(_bad_json(counter, n, f"line {n}, column {exc.colno}: {msg}"))
            continue
        except RecursionError:
            batches.append(_bad_json(counter, n, f"line {n}: the JSON value is nested too deeply to read"))
            continue
        batches.append(_batch(value, n, counter, 0))
    return batches


def _read_text(text: str, counter: _Counter) -> list[Batch]:
    stripped = text.strip()
    if not stripped:
        rec = CallRecord(index=counter.next(), line=1)
        rec.problems.append(Problem(INVALID_CALL, "The input is empty: there is no call to check."))
        return [Batch("single", [rec], 1)]
    try:
        value = json.loads(text)
    except (json.JSONDecodeError, RecursionError):
        pass
    else:
        return [_batch(value, text[: len(text) - len(text.lstrip())].count("\n") + 1, counter, 0)]
    if _looks_like_jsonl(text):
        return _read_jsonl(text, counter)
    line_starts = [0] + [m.end() for m in re.finditer(r"\n", text)]
    batches: list[Batch] = []
    pos = _WS.match(text, 0).end()
    while pos < len(text):
        line = _line_of(text, pos, line_starts)
        try:
            value, end = _DECODER.raw_decode(text, pos)
        except json.JSONDecodeError as exc:
            batches.append(_bad_json(counter, line, f"line {exc.lineno}, column {exc.colno}: {_json_msg(exc)}"))
            pos = _resync(text, pos, exc.pos)
            continue
        except RecursionError:
            batches.append(_bad_json(counter, line, f"line {line}: the JSON value starting here is nested too deeply to read"))
            pos = _resync(text, pos, pos)
            continue
        batches.append(_batch(value, line, counter, 0))
        pos = _WS.match(text, end).end()
        # Anything but whitespace after a value on the same line is handled by the next
        # iteration (concatenated values) or reported as invalid JSON there.
    return batches


def _json_msg(exc: json.JSONDecodeError) -> str:
    msg = exc.msg
    if msg.startswith("Unterminated string"):
        return "Unterminated string (it starts here)"
    return msg[:-3] if msg.endswith(" at") else msg


def _resync(text: str, start: int, err: int) -> int:
    """Where to go on after a JSON error: the next line (after the error's line, and after
    the line the failed value started on) that begins with ``{`` or ``[``."""
    after = max(start, err)
    nl = text.find("\n", after)
    if nl < 0:
        return len(text)
    m = _NEW_VALUE.search(text, nl + 1)
    return m.start() if m else len(text)


def _bad_json(counter: _Counter, line: int, msg: str) -> Batch:
    rec = CallRecord(index=counter.next(), line=line)
    rec.problems.append(Problem(INVALID_JSON, f"Invalid JSON at {msg}. Send the call as one JSON object "
                                              f"per line with 'name' and 'arguments'."))
    return Batch("single", [rec], line)


def _shape_problem(value: Any) -> Problem:
    if isinstance(value, dict):
        keys = ", ".join(sorted(str(k) for k in value)[:8]) or "none"
        got = f"an object with keys: {keys}"
    else:
        got = {list: "an array", str: "a string", bool: "a boolean", type(None): "null"}.get(
            type(value), "a number" if isinstance(value, (int, float)) else type(value).__name__)
    return Problem(INVALID_CALL, f"Expected a tool call ({{\"name\": ..., \"arguments\": {{...}}}}), an OpenAI message "
                                 f"with 'tool_calls', or a plan with 'steps'; got {got}.")


def _batch(value: Any, line: int | None, counter: _Counter, depth: int) -> Batch:
    if depth > MAX_WRAPPING:
        rec = CallRecord(index=counter.next(), line=line)
        rec.problems.append(Problem(INVALID_CALL, f"Calls are wrapped more than {MAX_WRAPPING} levels deep."))
        return Batch("single", [rec], line)
    if isinstance(value, dict):
        if "call" in value and not _is_call(value):
            return _batch(value["call"], line, counter, depth + 1)
        if "plan" in value and not _is_call(value):
            return _plan(value["plan"], line, counter, depth + 1)
        if isinstance(value.get("steps"), list):
            return _plan(value, line, counter, depth + 1)
        calls = _message_calls(value, line, counter, depth)
        if calls is not None:
            return Batch("sequence", calls, line)
        return Batch("single", [_call(value, line, counter)], line)
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value) and any(_deps_key(v) for v in value):
            return _plan({"steps": value}, line, counter, depth + 1)
        calls: list[CallRecord] = []
        for item in value:
            if isinstance(item, (dict, list)):
                calls.extend(_batch(item, line, counter, depth + 1).calls)
            else:
                rec = CallRecord(index=counter.next(), line=line)
                rec.problems.append(_shape_problem(item))
                calls.append(rec)
        if not calls:
            rec = CallRecord(index=counter.next(), line=line)
            rec.problems.append(Problem(INVALID_CALL, "The input is an empty array: there is no call to check."))
            calls.append(rec)
        return Batch("sequence", calls, line)
    rec = CallRecord(index=counter.next(), line=line)
    rec.problems.append(_shape_problem(value))
    return Batch("single", [rec], line)


def _is_call(d: dict) -> bool:
    """A call object itself (name and arguments, or an OpenAI ``function``), as opposed
    to a wrapper such as ``{"case": ..., "call": {...}, "expect": ...}``."""
    if isinstance(d.get("function"), dict):
        return True
    return any(k in d for k in _NAME_KEYS) and any(k in d for k in _ARG_KEYS)


def _deps_key(d: dict) -> str | None:
    for k in _DEP_KEYS:
        if k in d:
            return k
    return None


def _message_calls(d: dict, line: int | None, counter: _Counter, depth: int) -> list[CallRecord] | None:
    """The calls of a message-like object, or ``None`` when ``d`` is not one."""
    if isinstance(d.get("choices"), list):
        out: list[CallRecord] = []
        for choice in d["choices"]:
            msg = choice.get("message") if isinstance(choice, dict) else None
            if isinstance(msg, dict):
                out.extend(_message_calls(msg, line, counter, depth + 1) or [])
        return out or None
    if "tool_calls" in d and "name" not in d:
        if not isinstance(d["tool_calls"], list):
            rec = CallRecord(index=counter.next(), line=line)
            rec.problems.append(Problem(INVALID_CALL, f"'tool_calls' must be an array of tool calls, got "
                                                      f"{_type_name(d['tool_calls'])}."))
            return [rec]
        return [_call(tc, line, counter) for tc in d["tool_calls"]] or None
    if isinstance(d.get("function_call"), dict):
        return [_call(d["function_call"], line, counter)]
    if d.get("method") == "tools/call" and isinstance(d.get("params"), dict):
        return [_call(d["params"], line, counter, call_id=d.get("id"))]
    content = d.get("content")
    if "role" in d and isinstance(content, list):
        uses = [b for b in content if isinstance(b, dict) and b.get("type") == "tool_use"]
        if uses:
            return [_call(b, line, counter) for b in uses]
    return None


def _call(d: Any, line: int | None, counter: _Counter, *, call_id: Any = None) -> CallRecord:
    rec = CallRecord(index=counter.next(), line=line, call_id=call_id)
    if not isinstance(d, dict):
        rec.problems.append(_shape_problem(d))
        return rec
    if call_id is None:
        rec.call_id = d.get("id") if "id" in d and ("function" in d or d.get("type") == "tool_use") else d.get("call_id")
    fn = d.get("function") if isinstance(d.get("function"), dict) else d
    name_key = next((k for k in _NAME_KEYS if k in fn), None)
    if name_key is None:
        rec.problems.append(_shape_problem(d))
        return rec
    rec.name = fn[name_key]
    if not isinstance(rec.name, str):
        rec.problems.append(Problem(INVALID_CALL, f"The tool name must be a string, got {_type_name(rec.name)}.",
                                    field=name_key))
        return rec
    rec.confidence = fn.get("confidence", d.get("confidence"))
    arg_key = next((k for k in _ARG_KEYS if k in fn), None)
    raw = fn.get(arg_key) if arg_key else None
    if raw is None:
        rec.arguments = {}
    elif isinstance(raw, str):
        if not raw.strip():
            rec.arguments = {}
        else:
            try:
                rec.arguments = json.loads(raw)
            except json.JSONDecodeError as exc:
                rec.arguments = raw
                rec.problems.append(Problem(
                    INVALID_ARGUMENT,
                    f"The '{arg_key}' string is not valid JSON (line {exc.lineno}, column {exc.colno} of the "
                    f"string: {exc.msg}). Send the arguments as one JSON object.", field=arg_key))
                return rec
            except RecursionError:
                rec.arguments = raw
                rec.problems.append(Problem(INVALID_ARGUMENT, f"The '{arg_key}' JSON string is nested too deeply.",
                                            field=arg_key))
                return rec
    else:
        rec.arguments = raw
    if not isinstance(rec.arguments, dict):
        rec.problems.append(Problem(INVALID_ARGUMENT, f"The arguments must be a JSON object with named fields, got "
                                                      f"{_type_name(rec.arguments)}.", field=arg_key or "arguments"))
        return rec
    if "confidence" in rec.arguments and rec.confidence is None:
        rec.confidence = rec.arguments["confidence"]
        rec.arguments = {k: v for k, v in rec.arguments.items() if k != "confidence"}
    return rec


def _plan(value: Any, line: int | None, counter: _Counter, depth: int) -> Batch:
    steps = value.get("steps") if isinstance(value, dict) else value
    if not isinstance(steps, list):
        rec = CallRecord(index=counter.next(), line=line)
        rec.problems.append(Problem(INVALID_CALL, f"A plan needs a 'steps' array, got {_type_name(steps)}."))
        return Batch("plan", [rec], line)
    calls: list[CallRecord] = []
    for i, step in enumerate(steps):
        if not isinstance(step, dict):
            rec = CallRecord(index=counter.next(), line=line, step=f"#{i + 1}")
            rec.problems.append(_shape_problem(step))
            calls.append(rec)
            continue
        inner = step.get("call", step.get("tool_call", step))
        rec = _call(inner if isinstance(inner, dict) else step, line, counter)
        rec.step = step.get("id", step.get("step"))
        dk = _deps_key(step)
        rec.depends_on = step.get(dk) if dk else None
        if rec.confidence is None and "confidence" in step:
            rec.confidence = step["confidence"]
        calls.append(rec)
    if not calls:
        rec = CallRecord(index=counter.next(), line=line)
        rec.problems.append(Problem(INVALID_CALL, "The plan has no steps."))
        calls.append(rec)
    return Batch("plan", calls, line)


def _type_name(v: Any) -> str:
    if isinstance(v, bool):
        return "a boolean"
    if isinstance(v, (int, float)):
        return "a number"
    return {dict: "an object", list: "an array", str: "a string", type(None): "null"}.get(type(v), type(v).__name__)
