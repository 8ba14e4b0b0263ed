"""Plans: steps with ids and ``depends_on``, checked for dependency mistakes and then
simulated in order against a copy-on-write view of the index.

Dependency codes (each reported on the step that declares the dependency):

* ``unknown_dependency`` — no step has that id (suggestions: similar ids);
* ``self_dependency`` — a step depends on itself;
* ``forward_dependency`` — a step depends on a step listed after it (steps run in list
  order), when that edge is not part of a cycle;
* ``dependency_cycle`` — steps that depend on each other in a circle; the message spells
  the cycle out (``s1 → s3 → s2 → s1``, read "depends on").

Simulation: every step runs through :func:`~.calls.check_call` with one
:class:`~.overlay.Overlay` for the whole plan, so instances and scripts created by
earlier steps are valid paths for later steps and deleted ones are not.  The real index
is never changed.
"""

from __future__ import annotations

from typing import Any

from ..findings import Severity
from ..fuzzy import rank
from ..rules.wording import did_you_mean
from . import model as M
from .calls import CallContext, check_call
from .model import Batch, CallResult, Problem


def _label(step: Any, i: int) -> str:
    return str(step) if isinstance(step, (str, int)) and not isinstance(step, bool) and str(step) else f"#{i + 1}"


def dependency_problems(batch: Batch) -> list[list[Problem]]:
    """Per step (in order), the dependency problems of a plan batch."""
    steps = batch.calls
    out: list[list[Problem]] = [[] for _ in steps]
    index_of: dict[str, int] = {}
    for i, rec in enumerate(steps):
        sid = rec.step
        if sid is None:
            continue
        if isinstance(sid, bool) or not isinstance(sid, (str, int)):
            out[i].append(Problem(M.INVALID_ARGUMENT, f"Step ids must be strings or numbers, got {sid!r}.", field="id"))
            continue
        key = str(sid)
        if key in index_of:
            out[i].append(Problem(M.INVALID_ARGUMENT, f"Step id '{key}' is used by steps {index_of[key] + 1} and {i + 1}; "
                                                      f"ids must be unique.", field="id"))
            continue
        index_of[key] = i
    edges: list[list[int]] = [[] for _ in steps]
    for i, rec in enumerate(steps):
        deps = rec.depends_on
        if deps is None:
            continue
        if isinstance(deps, (str, int)) and not isinstance(deps, bool):
            deps = [deps]
        if not isinstance(deps, list):
            out[i].append(Problem(M.INVALID_ARGUMENT, f"'depends_on' must be a list of step ids, got {deps!r}.",
                                  field="depends_on"))
            continue
        me = _label(rec.step, i)
        for dep in deps:
            if isinstance(dep, bool) or not isinstance(dep, (str, int)):
                out[i].append(Problem(M.INVALID_ARGUMENT, f"'depends_on' holds {dep!r}, which is not a step id.",
                                      field="depends_on"))
                continue
            key = str(dep)
            j = index_of.get(key)
            if j is None:
                sugg = tuple(c for c, _ in rank(key, list(index_of), limit=3))
                msg = f"Step '{me}' depends on '{key}', but no step has that id."
                msg += did_you_mean(sugg, none="", lead=" ")
                out[i].append(Problem(M.UNKNOWN_DEPENDENCY, msg, field="depends_on", suggestions=sugg,
                                      hint=f"Step ids: {', '.join(list(index_of)[:20])}."))
            elif j == i:
                out[i].append(Problem(M.SELF_DEPENDENCY, f"Step '{me}' depends on itself; remove '{key}' from its depends_on.",
                                      field="depends_on"))
            elif j not in edges[i]:
                edges[i].append(j)
    in_cycle: dict[int, tuple[int, str]] = {}
    for k, comp in enumerate(_strong_components(edges)):
        if len(comp) > 1:
            cycle = [_label(steps[n].step, n) for n in _cycle_path(min(comp), set(comp), edges)]
            if len(cycle) > 12:
                cycle = cycle[:6] + ["…"] + cycle[-4:]
            spelled = " → ".join(cycle)
            if len(comp) > 12:
                spelled += f" ({len(comp)} steps are involved)"
            for n in comp:
                in_cycle[n] = (k, spelled)
    for i, rec in enumerate(steps):
        me = _label(rec.step, i)
        for j in edges[i]:
            if i in in_cycle and j in in_cycle and in_cycle[i][0] == in_cycle[j][0]:
                continue
            if j > i:
                other = _label(steps[j].step, j)
                out[i].append(Problem(M.FORWARD_DEPENDENCY,
                                      f"Step '{me}' (step {i + 1}) depends on '{other}', which comes later (step {j + 1}). "
                                      f"Move '{other}' before '{me}'.", field="depends_on"))
        if i in in_cycle:
            spelled = in_cycle[i][1]
            out[i].append(Problem(M.DEPENDENCY_CYCLE, f"Steps depend on each other in a cycle: {spelled} "
                                                      f"(→ reads 'depends on'). Break the cycle so the steps can run in order.",
                                  field="depends_on"))
    return out


def _strong_components(edges: list[list[int]]) -> list[list[int]]:
    """Tarjan's algorithm, iterative (no recursion limit on long plans)."""
    n = len(edges)
    index = [-1] * n
    low = [0] * n
    on_stack = [False] * n
    stack: list[int] = []
    comps: list[list[int]] = []
    counter = 0
    for start in range(n):
        if index[start] != -1:
            continue
        work: list[tuple[int, int]] = [(start, 0)]
        index[start] = low[start] = counter
        counter += 1
        stack.append(start)
        on_stack[start] = True
        while work:
            v, pos = work[-1]
            if pos < len(edges[v]):
                work[-1] = (v, pos + 1)
                w = edges[v][pos]
                if index[w] == -1:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on_stack[w] = True
                    work.append((w, 0))
                elif on_stack[w]:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                u = work[-1][0]
                low[u] = min(low[u], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on_stack[w] = False
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def _cycle_path(start: int, members: set[int], edges: list[list[int]]) -> list[int]:
    """A shortest cycle through ``start`` inside one strong component (BFS), as a node
    list that ends where it starts."""
    prev: dict[int, int] = {}
    queue = [start]
    seen = {start}
    i = 0
    while i < len(queue):
        v = queue[i]
        i += 1
        for w in edges[v]:
            if w not in members:
                continue
            if w == start:
                path = [v]
                while path[-1] != start:
                    path.append(prev[path[-1]])
                return [start, *reversed(path[:-1]), start] if len(path) > 1 else [start, v, start]
            if w not in seen:
                seen.add(w)
                prev[w] = v
                queue.append(w)
    return [start, start]


def check_plan(ctx: CallContext, batch: Batch) -> list[CallResult]:
    """Dependency problems plus the simulated per-step checks, one result per step."""
    deps = dependency_problems(batch)
    results: list[CallResult] = []
    for i, (rec, dep_problems) in enumerate(zip(batch.calls, deps)):
        ctx.label = f"step '{_label(rec.step, i)}'"
        result = check_call(ctx, rec)
        result.errors[:0] = [p for p in dep_problems if p.severity is Severity.ERROR]
        result.warnings[:0] = [p for p in dep_problems if p.severity is not Severity.ERROR]
        results.append(result)
    return results


def check_sequence(ctx: CallContext, batch: Batch) -> list[CallResult]:
    """Calls of one sequence, in order, sharing one overlay."""
    out = []
    for i, rec in enumerate(batch.calls):
        ctx.label = f"call {i + 1} of this batch" if len(batch.calls) > 1 else "this call"
        out.append(check_call(ctx, rec))
    return out
