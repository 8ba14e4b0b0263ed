"""Tool-schema ``pattern``s on a linear-time engine: Google's RE2 (the ``google-re2`` package).

A tool schema comes from a repository's ``luaguard.toml``, a ``--tools`` file or the
``tools/list`` of the MCP server behind the proxy: untrusted input.  Python's ``re``
backtracks (``^(a+)+$`` against 48 ``a`` and a ``!`` runs for years) and holds the GIL while
it does, so no time-out can stop it.  RE2 matches in time linear in the text, so every
``pattern`` and ``patternProperties`` key is matched by RE2 here, and Python's ``re`` never
sees one: :func:`install` gives jsonschema's keyword code (``pattern``, ``patternProperties``
and the property lookups behind ``additionalProperties`` / ``unevaluatedProperties``) a
stand-in for the ``re`` module that uses RE2.

Semantics kept from JSON Schema (draft 2020-12 §6.3.3: ECMA-262 regular expressions, not
anchored - a search): ``$`` matches only at the end of the text (not before a final newline,
as Python's does), ``\\d``/``\\w``/``\\b`` are ASCII, ``\\uXXXX`` and ``\\u{X...}`` escapes are
read as code points.  Where RE2 differs from ECMA-262: no backreferences (``\\1``) and no
lookaround (``(?=``, ``(?!``, ``(?<=``, ``(?<!``) - such a pattern is *not supported*: it is
reported once when the tool is loaded (:func:`unsupported_patterns`) and skipped (never
checked, never a hang); ``\\s`` is ASCII whitespace only (ECMA-262 adds the Unicode spaces);
``.`` excludes only ``\\n`` (ECMA-262 also ``\\r``, U+2028 and U+2029); ``[^]`` and ``\\cX`` are
not supported.
"""

from __future__ import annotations

import re
from typing import Any

_CACHE: dict[str, Any] = {}
_CACHE_MAX = 4096
_U_ESCAPE = re.compile(r"(?<!\\)((?:\\\\)*)\\u(?:\{([0-9A-Fa-f]{1,6})\}|([0-9A-Fa-f]{4}))")
_SURROGATE = re.compile("[\ud800-\udfff]")
_UNSUPPORTED = object()


def _compile(pattern: str):
    """The RE2 program of an ECMA-262 ``pattern``, or raise ``ValueError`` (RE2's message)."""
    import re2

    options = re2.Options()
    options.log_errors = False  # a bad pattern is reported by luaguard, once, not logged to stderr
    text = _U_ESCAPE.sub(lambda m: f"{m.group(1)}\\x{{{m.group(2) or m.group(3)}}}", pattern)
    try:
        return re2.compile(text, options)
    except re2.error as exc:
        msg = exc.args[0] if exc.args else exc
        raise ValueError(msg.decode("utf-8", "replace") if isinstance(msg, bytes) else str(msg)) from None
    except (TypeError, UnicodeError) as exc:
        raise ValueError(str(exc)) from None


def linear_pattern(pattern: Any):
    """The compiled RE2 program of ``pattern`` (cached), or ``None`` when RE2 does not support
    it (see the module docstring) or it is not a string."""
    got = _CACHE.get(pattern) if isinstance(pattern, str) else _UNSUPPORTED
    if got is None:
        try:
            got = _compile(pattern)
        except ValueError:
            got = _UNSUPPORTED
        if len(_CACHE) >= _CACHE_MAX:
            _CACHE.clear()
        _CACHE[pattern] = got
    return None if got is _UNSUPPORTED else got


def search(pattern: Any, text: str) -> bool | None:
    """Does ``pattern`` match somewhere in ``text``?  ``None``: the pattern is not supported."""
    rx = linear_pattern(pattern)
    if rx is None:
        return None
    try:
        return rx.search(text) is not None
    except UnicodeEncodeError:  # lone surrogates (valid in JSON strings) are not UTF-8
        return rx.search(_SURROGATE.sub("\ufffd", text)) is not None


def unsupported_patterns(schema: Any) -> list[tuple[str, str]]:
    """``(pattern, why)`` for every ``pattern`` and ``patternProperties`` key in ``schema``
    that RE2 cannot run (in order, each once)."""
    out: list[tuple[str, str]] = []
    seen: set[str] = set()
    stack = [schema]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            found = []
            if isinstance(node.get("pattern"), str):
                found.append(node["pattern"])
            if isinstance(node.get("patternProperties"), dict):
                found.extend(k for k in node["patternProperties"] if isinstance(k, str))
            for p in found:
                if p in seen:
                    continue
                seen.add(p)
                try:
                    _compile(p)
                except ValueError as exc:
                    out.append((p, str(exc)))
            stack.extend(reversed(list(node.values())))
        elif isinstance(node, list):
            stack.extend(reversed(node))
    return out


class _LinearRe:
    """Stands in for the ``re`` module inside jsonschema's keyword code: ``search`` runs on
    RE2.  An unsupported pattern counts as a match there (its property is not reported as
    an additional one: the pattern is skipped, never judged)."""

    @staticmethod
    def search(pattern: Any, string: Any, flags: int = 0):
        if not isinstance(string, str):
            return None
        return True if search(pattern, string) is not False else None

    def __getattr__(self, name: str) -> Any:
        return getattr(re, name)


def _pattern(validator, patrn, instance, schema):
    from jsonschema.exceptions import ValidationError

    if validator.is_type(instance, "string") and search(patrn, instance) is False:
        yield ValidationError(f"{instance!r} does not match {patrn!r}")


def _pattern_properties(validator, pattern_properties, instance, schema):
    if not validator.is_type(instance, "object"):
        return
    for pattern, subschema in pattern_properties.items():
        for k, v in instance.items():
            if search(pattern, k):
                yield from validator.descend(v, subschema, path=k, schema_path=pattern)


_INSTALLED: list[bool] = []


def install() -> None:
    """Make jsonschema's property lookups (``additionalProperties``,
    ``unevaluatedProperties``) use RE2 (idempotent)."""
    if _INSTALLED:
        return
    import jsonschema._keywords
    import jsonschema._legacy_keywords
    import jsonschema._utils

    for module in (jsonschema._keywords, jsonschema._legacy_keywords, jsonschema._utils):
        module.re = _LinearRe()
    _INSTALLED.append(True)


def linear_validator_class(cls):
    """``cls`` (a jsonschema validator class) with ``pattern`` and ``patternProperties`` on
    RE2 (:func:`install` done too)."""
    from jsonschema import validators

    install()
    got = _CLASSES.get(cls)
    if got is None:
        got = _CLASSES[cls] = validators.extend(cls, {"pattern": _pattern, "patternProperties": _pattern_properties})
    return got


_CLASSES: dict[Any, Any] = {}
