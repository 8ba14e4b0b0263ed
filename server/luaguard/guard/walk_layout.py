"""The constants the compiled mask walk (``_walk.c``) shares with the Python automaton,
taken from their Python definitions when the extension is built (no hand copy, no check
at run time).

``setup.py`` loads this file by its path (before luaguard's dependencies are installed:
standard library only) and writes :func:`header` into ``_walk_layout.h`` for the
compiler.  The values are read from the modules' source with :mod:`ast` - top-level
assignments of integer expressions (``A = 1``, ``A, B = 1, 2``, ``(A, B) = range(2)``,
``F = A | B``, ``G = 1 << 13``, ``X = -2``) - so building needs none of them importable.
:data:`CONSTANTS` lists every name the C code uses, in the header's order.
"""

from __future__ import annotations

import ast
from pathlib import Path

#: ``(C name, module of luaguard/guard, Python name)``, in the header's order
CONSTANTS: tuple[tuple[str, str, str], ...] = tuple(
    [(n, "automaton", n) for n in (
        # modes
        "M_CODE", "M_IDENT", "M_NUM", "M_DASH", "M_DOT1", "M_DOT2", "M_COLON", "M_LBRACK", "M_LBRACK_EQ", "M_STR",
        "M_LSTR", "M_CSTART", "M_CLB", "M_LCMT", "M_BCMT", "M_INTERP", "M_NAME", "M_LARG", "M_NSTR", "M_AFTER",
        "M_IARG", "M_TILDE",
        # previous-token classes
        "P_NONE", "P_PRE", "P_NAME", "P_CALLABLE", "P_VAL", "P_OTHER", "P_FUNCTION", "P_THEN_EXPR", "P_STRING",
        "P_FNAME",
        # argument kinds, payload values, flags
        "A_CALL", "A_INDEX", "A_STRCALL", "TYPE_PREV", "TYPE_STR", "LITERAL", "ATTACH_MAYBE",
        "G_FRESH", "G_CHAIN", "G_IMPURE", "F_NL", "F_IOPEN", "F_CMT", "F_CR", "F_DOTS", "F_TYPEKW", "F_EXPORTKW",
        "F_KEPT", "I_JUXT", "I_EXPRPOS", "I_AFTER_STRING",
        "END_DQ", "END_SQ", "END_BT", "END_RB", "END_NL",
        "F_IDENT", "F_NSTR", "F_LCMT", "F_BCMT", "F_LSTR",
        # byte classes in code
        "C_BAD", "C_WS", "C_NL", "C_IDSTART", "C_DIGIT",
        # numbers
        "N_NONE", "PH1", "S_Z", "S_D", "S_F", "S_E", "N_NUM_STATES",
    )]
    # string-kind flags: F_* in Python, FK_* in C (the C code's F_* are the state flags)
    + [("FK_DQ", "automaton", "F_DQ"), ("FK_SQ", "automaton", "F_SQ"), ("FK_INTERP", "automaton", "F_INTERP"),
       ("FK_BLANK", "automaton", "F_BLANK")]
    + [(n, "brackets", n) for n in ("K_CALL", "K_GROUP", "K_INDEX", "K_TABLE", "K_INTERP", "K_FUNC", "K_PARAMS",
                                    "K_TBRACE", "K_CTX", "NOVAL", "POISON")]
    + [("KIND_BRACKET", "paths", "KIND_BRACKET"), ("DESC", "paths", "DESC"), ("BANNED", "regexdfa", "BANNED")]
)


def _eval(node: ast.expr, env: dict[str, int]):
    if isinstance(node, ast.Constant) and type(node.value) is int:
        return node.value
    if isinstance(node, ast.Name):
        return env[node.id]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub):
        return -_eval(node.operand, env)
    if isinstance(node, ast.BinOp):
        a, b = _eval(node.left, env), _eval(node.right, env)
        ops = {ast.BitOr: lambda: a | b, ast.BitAnd: lambda: a & b, ast.LShift: lambda: a << b,
               ast.Add: lambda: a + b, ast.Sub: lambda: a - b, ast.Mult: lambda: a * b}
        return ops[type(node.op)]()
    if isinstance(node, ast.Tuple):
        return tuple(_eval(e, env) for e in node.elts)
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id == "range" \
            and 1 <= len(node.args) <= 3 and not node.keywords:
        return tuple(range(*(_eval(a, env) for a in node.args)))
    raise ValueError("not an integer expression")


def module_constants(source: str) -> dict[str, int]:
    """Every top-level name ``source`` assigns an integer expression (see the module docstring)."""
    env: dict[str, int] = {}
    for stmt in ast.parse(source).body:
        if not isinstance(stmt, ast.Assign) or len(stmt.targets) != 1:
            continue
        target = stmt.targets[0]
        try:
            value = _eval(stmt.value, env)
        except (KeyError, ValueError, TypeError):
            continue
        if isinstance(target, ast.Name) and isinstance(value, int):
            env[target.id] = value
        elif isinstance(target, ast.Tuple) and isinstance(value, tuple) and len(value) == len(target.elts) \
                and all(isinstance(t, ast.Name) for t in target.elts):
            env.update({t.id: v for t, v in zip(target.elts, value) if isinstance(v, int)})
    return env


def values(guard_dir: Path) -> dict[str, int]:
    """``{C name: value}`` of :data:`CONSTANTS`, read from the modules in ``guard_dir``.

    Raises ``KeyError`` naming a constant its module no longer defines as an integer."""
    per_module: dict[str, dict[str, int]] = {}
    out: dict[str, int] = {}
    for c_name, module, py_name in CONSTANTS:
        if module not in per_module:
            per_module[module] = module_constants((guard_dir / f"{module}.py").read_text(encoding="utf-8"))
        env = per_module[module]
        if py_name not in env:
            raise KeyError(f"luaguard/guard/{module}.py defines no integer {py_name} (_walk.c's {c_name})")
        out[c_name] = env[py_name]
    return out


def header(guard_dir: Path) -> str:
    """The text of ``_walk_layout.h``: one ``#define`` per constant."""
    lines = ["/* Generated by luaguard/guard/walk_layout.py from the Python definitions when the extension is",
             " * built: do not edit, do not commit. */", "#ifndef LUAGUARD_WALK_LAYOUT_H", "#define LUAGUARD_WALK_LAYOUT_H"]
    modules = {c: m for c, m, _ in CONSTANTS}
    for name, value in values(guard_dir).items():
        lines.append(f"#define {name} ({value}) /* {modules[name]}.py */")
    lines.append("#endif")
    return "\n".join(lines) + "\n"
