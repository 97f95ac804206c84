"""Stable ids for the worklist: every graph-break site and recompile cause, named the same in two runs.

An agent or a CI job that fixes one item must be able to ask "is it gone?" of the next run. Compile ids,
event indices, frame ids and the values a guard compared all change from run to run; what does not is
*what* broke and *where in the user's code*:

* a graph-break site: torch's graph-break id (``GB0170``; a short hash of torch's reason when it gave
  none) and the user's file *name* and line: ``GB0170@model.py:42``. The file name, not its path, as
  ``compare`` aligns breaks: the same code checked out in two places has the same ids.
* a recompile cause: the kind of guard that failed, what it guarded (as the user writes it, the
  dimension of a size guard) and the compiled function's file name and first line:
  ``size:x:0@model.py:40``, ``float:scale@model.py:40``, ``size:kwargs['input_ids']:1@gpt2.py:880``.
  The values (``expected 4, actual 8``) are left out: a storm of recompiles over sizes is one cause.

``triage --json`` carries the ids (``graph_breaks[].id``, ``recompiles[].id``) and the ``worklist``
(one entry per id with its count); ``compare`` reports the worklist as ``resolved`` / ``new`` /
``unchanged`` by id; ``check`` can refuse new ids against a baseline (docs/HEADLESS.md).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Iterator
from typing import Any

from magi_format.lazyre import lazy_re
from magi_tui.model.analysis.checks import Analysis, BreakEntry, FrameRow, RecompileInfo
from magi_tui.model.json_stream import Lazy

#: the version of ``triage --json``'s shape; raised when a key changes meaning or goes away
SCHEMA_VERSION = 2

_FRAME_LABEL = lazy_re(r"\((?P<file>[^():]+):(?P<line>\d+)\)\s*$")
_VOLATILE = lazy_re(r"0x[0-9a-fA-F]+|\d+")
_SIZE_EXPR = lazy_re(r"[\w\[\]'\".]+\.(?:size|stride)\(\)\[\d+\]")


def _base(file: str | None) -> str:
    if not file:
        return "?"
    return re.split(r"[\\/]", file)[-1] or "?"


def _short_hash(text: str) -> str:
    """8 hex digits of the text with numbers and addresses masked (``R`` + hash: a reason, not a GB id)."""
    norm = " ".join(_VOLATILE.sub("N", text).split())
    import hashlib  # here: every headless start would pay its import otherwise

    return "R" + hashlib.sha1(norm.encode("utf-8", "replace")).hexdigest()[:8]


def break_id(b: BreakEntry) -> str:
    """``GB0170@model.py:42``: torch's graph-break id (or a hash of its reason) at the user's file:line."""
    what = b.gb_id or _short_hash(b.reason or "graph break")
    where = _base(b.file) + (f":{b.line}" if b.line is not None else "")
    return f"{what}@{where}"


def _frame_where(info: RecompileInfo, frames: dict[str, FrameRow]) -> str:
    row = frames.get(info.frame_key or "")
    if row is not None and row.file:
        return _base(row.file) + (f":{row.line}" if row.line is not None else "")
    m = _FRAME_LABEL.search(info.frame or "")
    if m:
        return f"{_base(m.group('file'))}:{m.group('line')}"
    name = (row.name if row is not None else None) or (info.frame or "?").split(" (")[0]
    return name or "?"


def recompile_id(info: RecompileInfo, frames: dict[str, FrameRow]) -> str:
    """``size:x:0@model.py:40``: the failed guard's kind and subject (no values) at the compiled function."""
    p = info.primary
    where = _frame_where(info, frames)
    if p is None:
        return f"unknown@{where}"
    from magi_tui.model.analysis.guards import user_expr  # here: a run without recompiles never loads the guard grammar

    subject = user_expr(p.subject) if p.subject else None
    if subject and subject.startswith("___stack"):
        subject = "computed"  # a value computed before a graph break (.item())
    elif subject and re.search(r"\s|[<>=]", subject):
        # an expression (``4 <= x.size()[0] <= 4096``): what it is about, without the values
        m = _SIZE_EXPR.search(subject)
        subject = m.group(0) if m else " ".join(_VOLATILE.sub("N", subject).split())
    if subject:
        what = subject + (f":{p.index}" if p.index is not None else "")
    else:
        what = _short_hash(p.guard or p.text)
    return f"{p.kind}:{what}@{where}"


def _one_line(text: str) -> str:
    """A reason's first line without the source comment torch appends (``  # return x * s  # f.py:7``)."""
    first = (text.splitlines() or [""])[0]
    return " ".join(first.split("  #")[0].split())


def frames_by_key(a: Analysis) -> dict[str, FrameRow]:
    return {f.key: f for f in a.frames}


def worklist(a: Analysis) -> list[dict[str, Any]]:
    """One entry per id: ``{id, kind: graph_break|recompile, count, message}``, breaks first, each kind
    most frequent first (as the triage worklist)."""
    frames = frames_by_key(a)
    out: dict[str, dict[str, Any]] = {}
    for b in a.worklist:
        i = break_id(b)
        e = out.setdefault(i, {"id": i, "kind": "graph_break", "count": 0,
                               "message": f"{b.gb_type or b.reason} at {b.where}"})
        e["count"] += b.count
    recs: dict[str, dict[str, Any]] = {}
    for r in a.recompiles:
        i = recompile_id(r, frames)
        p = r.primary
        e = recs.setdefault(i, {"id": i, "kind": "recompile", "count": 0,
                                "message": f"{r.frame}: {_one_line(p.text) if p else 'recompiled'}",
                                "automatic_dynamic": r.automatic_dynamic})
        e["count"] += 1
        e["automatic_dynamic"] = e["automatic_dynamic"] and r.automatic_dynamic
    ordered = sorted(out.values(), key=lambda e: -e["count"]) + sorted(recs.values(), key=lambda e: -e["count"])
    return ordered


def annotate_triage(out: dict[str, Any], a: Analysis) -> dict[str, Any]:
    """``triage --json`` with ``schema_version`` first, an ``id`` on every break site and recompile, and the
    ``worklist`` (the same entries in the same order as the lists they come from). A list given as a
    :class:`~magi_tui.model.json_stream.Lazy` stays one (its entries get their id as they are made)."""
    frames = frames_by_key(a)
    for key, items, id_of in (("graph_breaks", a.worklist, break_id),
                              ("recompiles", a.recompiles, lambda r: recompile_id(r, frames))):
        if key in out:
            entries = _with_ids(out[key], items, id_of)
            out[key] = Lazy(entries) if isinstance(out[key], Lazy) else list(entries)
    result: dict[str, Any] = {"schema_version": SCHEMA_VERSION}
    result.update(out)
    result["worklist"] = worklist(a)
    return result


def _with_ids(entries: Iterable[dict[str, Any]], items: Iterable[Any], id_of: Callable[[Any], str]
              ) -> Iterator[dict[str, Any]]:
    """Each entry with ``id`` = ``id_of`` its item (the same position in the list it was made from)."""
    it = iter(items)
    for entry in entries:
        item = next(it, _NONE)
        if item is not _NONE:
            entry["id"] = id_of(item)
        yield entry


_NONE = object()


def worklist_delta(a: Analysis, b: Analysis) -> dict[str, list[dict[str, Any]]]:
    """A's worklist against B's by id: ``resolved`` (in A only), ``new`` (in B only), ``unchanged`` (both,
    with ``count_a`` / ``count_b``)."""
    wa = {e["id"]: e for e in worklist(a)}
    wb = {e["id"]: e for e in worklist(b)}
    resolved = [dict(e, count_a=e["count"], count_b=0) for i, e in wa.items() if i not in wb]
    new = [dict(e, count_a=0, count_b=e["count"]) for i, e in wb.items() if i not in wa]
    unchanged = [dict(e, count_a=wa[i]["count"], count_b=e["count"]) for i, e in wb.items() if i in wa]
    for lst in (resolved, new, unchanged):
        for e in lst:
            e.pop("count", None)
    return {"resolved": resolved, "new": new, "unchanged": unchanged}
