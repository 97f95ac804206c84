"""The comparison as rows and text (``magi-tui compare`` and the compare screen)."""

from __future__ import annotations

from typing import Any

from magi_tui.model.analysis.checks import BreakEntry
from magi_tui.model.outputs.compare.comparison import Comparison
from magi_tui.model.outputs.compare.graphs import _base, _first_line


# -- text ----------------------------------------------------------------------------------------------
def _fmt_s(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}s"


def _fmt_d(v: float | int | None, unit: str = "") -> str:
    if v is None:
        return ""
    if isinstance(v, float):
        return f"{v:+.3f}{unit}"
    return f"{v:+d}{unit}"


def _break_line(e: BreakEntry, count: str) -> str:
    gid = e.gb_id or "-"
    where = f"{_base(e.file)}:{e.line}" if e.file else "?"
    fn = f" in {e.function}" if e.function else ""
    return f"{gid} {where}{fn} ×{count}: {e.reason}"


def compare_lines(c: Comparison, show_all: bool = False) -> list[tuple[str, str]]:
    """The comparison for people, as ``(style, text)`` lines (styles: head, add, del, same, warn, dim)."""
    return [(style, text) for style, text, _obj in compare_rows(c, show_all)]


class _Rows(list):
    """``(style, text, object)`` rows; ``append((style, text))`` carries no object."""

    def append(self, row: Any) -> None:
        super().append(tuple(row) if len(row) == 3 else (row[0], row[1], None))


def compare_rows(c: Comparison, show_all: bool = False, cap: int | None = None) -> list[tuple[str, str, Any]]:
    """The comparison for people: ``(style, text, object)`` rows, the object being what the row is
    about (a :class:`PassCompare` for a pass row: the compare screen diffs its graphs). The CLI prints
    the text; the compare screen styles it."""
    cap = None if show_all else (cap or 8)
    out = _Rows()
    aa, ab = c.a.analysis, c.b.analysis
    js = c.as_json()

    def capped(items: list) -> tuple[list, int]:
        if cap is None or len(items) <= cap:
            return items, 0
        return items[:cap], len(items) - cap

    out.append(("head", f"A  {c.a.run.path}  [{aa.status}]"))
    out.append(("head", f"B  {c.b.run.path}  [{ab.status}]"))
    s = js["summary"]
    out.append(("dim", f"graph breaks {s['graph_breaks']['a']} → {s['graph_breaks']['b']} "
                       f"(+{s['graph_breaks']['added']} −{s['graph_breaks']['removed']} sites) · "
                       f"recompiles {s['recompiles']['a']} → {s['recompiles']['b']} · "
                       f"failures {s['failures']['a']} → {s['failures']['b']} · "
                       f"compile {_fmt_s(js['compile_s']['a'])} → {_fmt_s(js['compile_s']['b'])}"))
    w = js["worklist"]
    out.append(("dim", f"worklist: {len(w['resolved'])} resolved · {len(w['new'])} new · "
                       f"{len(w['unchanged'])} unchanged (ids as triage --json gives them)"))
    for style, sign, key in (("del", "resolved", "resolved"), ("add", "new", "new")):
        items, more = capped(w[key])
        for e in items:
            out.append((style, f"  {sign}: {e['id']} ×{e['count_a'] if key == 'resolved' else e['count_b']}"))
        if more:
            out.append(("dim", f"    ... {more} more {key} (--all)"))
    out.append(("", ""))

    out.append(("head", "Graph breaks"))
    items, more = capped(c.breaks_added)
    for e in items:
        out.append(("add", "  + " + _break_line(e, str(e.count))))
    if more:
        out.append(("dim", f"    ... {more} more added (--all)"))
    items, more = capped(c.breaks_removed)
    for e in items:
        out.append(("del", "  − " + _break_line(e, str(e.count))))
    if more:
        out.append(("dim", f"    ... {more} more removed (--all)"))
    items, more = capped(c.breaks_unchanged)
    for ea, eb in items:
        out.append(("same", "  = " + _break_line(eb, f"{ea.count}→{eb.count}")))
    if more:
        out.append(("dim", f"    ... {more} more unchanged (--all)"))
    if not (c.breaks_added or c.breaks_removed or c.breaks_unchanged):
        out.append(("dim", "  none on either side"))

    out.append(("head", "Recompiles"))
    for style, sign, lst in (("add", "+", c.recompiles_added), ("del", "−", c.recompiles_removed)):
        items, more = capped(lst)
        for r in items:
            p = r.primary
            why = p.text if p is not None else "(no reason recorded)"
            out.append((style, f"  {sign} {r.frame} {r.compile_id or ''}: {_first_line(why)}".replace("  :", ":")))
        if more:
            out.append(("dim", f"    ... {more} more (--all)"))
    lim_a, lim_b = c.limit_hit
    for f in lim_b:
        out.append(("add" if f not in lim_a else "warn", f"  {'+' if f not in lim_a else '='} {f} hit the recompile limit"))
    for f in lim_a:
        if f not in lim_b:
            out.append(("del", f"  − {f} hit the recompile limit"))
    if not (c.recompiles_added or c.recompiles_removed or lim_a or lim_b):
        out.append(("dim", f"  no change ({len(aa.recompiles)} on each side)" if aa.recompiles else
                    "  none on either side"))

    out.append(("head", "Failures"))
    for style, word, cases in (("add", "new", c.failures_new), ("del", "fixed", c.failures_fixed)):
        for cas in cases[: cap or len(cases)]:
            ev = cas.head.event
            rec = " (recovered)" if cas.recovered else ""
            out.append((style, f"  {word}: {ev.lifecycle or ev.frag}: {cas.reason or '-'}{rec}"))
    if not (c.failures_new or c.failures_fixed):
        out.append(("dim", f"  no change ({len(aa.problems)} / {len(ab.problems)})"))

    ca, cb = js["cache"]["a"], js["cache"]["b"]
    out.append(("head", "Cache (hits / misses / bypasses)"))
    out.append(("same", f"  A {ca['hits']} / {ca['misses']} / {ca['bypasses']} ({ca['state']})   "
                        f"B {cb['hits']} / {cb['misses']} / {cb['bypasses']} ({cb['state']})"))
    explained, more = capped(c.cache_explained)
    for m in explained:
        out.append(("changed" if m.differs else "dim", "  B " + m.line(), m))
        fs = _factors(m)
        if fs:
            out.append(("warn", "      because " + "; ".join(fs[:3]), m))
        for d in m.differs[:4]:
            out.append(("dim", f"      {d['component'][:60]}: A {d['change']} B"))
    if more:
        out.append(("dim", f"  ... {more} more miss(es) (--all)"))

    out.append(("head", "Compile time"))
    ct = js["compile_s"]
    out.append(("same", f"  total  A {_fmt_s(ct['a'])}  B {_fmt_s(ct['b'])}  {_fmt_d(ct['delta'], 's')}"
                        + (f" ({ct['ratio']:+.0%})" if ct["ratio"] is not None else "")))
    phases, more = capped(ct["phases"])
    for ph in phases:
        out.append(("dim", f"  {ph['phase'][:38]:38} A {_fmt_s(ph['a'])}  B {_fmt_s(ph['b'])}  {_fmt_d(ph['delta'], 's')}"))

    out.append(("head", "Frames (compiles · compile s · ops per compile)"))
    frames, more = capped(c.frames)
    for f in frames:
        j = f.as_json()
        if f.status == "only_a":
            style, sign = "del", "−"
        elif f.status == "only_b":
            style, sign = "add", "+"
        else:
            style, sign = ("warn", "~") if f.graphs_differ or j["compiles"]["delta"] else ("same", "=")
        ops_a = ",".join("?" if x is None else str(x) for x in j["op_counts"]["a"]) or "-"
        ops_b = ",".join("?" if x is None else str(x) for x in j["op_counts"]["b"]) or "-"
        out.append((style, f"  {sign} {f.frame}", f))
        out.append(("dim", f"      compiles {j['compiles']['a'] if f.a else '-'}→{j['compiles']['b'] if f.b else '-'}"
                           f"  s {_fmt_s(j['compile_s']['a'])}→{_fmt_s(j['compile_s']['b'])}"
                           f"  ops {ops_a}→{ops_b}" + ("  graph differs" if f.graphs_differ else "")))
    if more:
        out.append(("dim", f"    ... {more} more frame(s) (--all)"))

    out.append(("head", "Passes and pieces (graph after, A vs B)"))
    # what changed first: passes whose graph differs, then the same, then those not compared
    both = sorted((p for p in c.passes if p.both), key=lambda p: {True: 0, False: 1, None: 2}[p.after_differs])
    items, more = capped(both)
    for p in items:
        mark = {True: ("warn", "≠ differs"), False: ("same", "= same"), None: ("dim", "? not read")}[p.after_differs]
        by = []
        for tag, side in (("A", p.a), ("B", p.b)):
            if side is not None and side.changed_graph is not None:
                by.append(f"{tag} {'changed' if side.changed_graph else 'kept'}")
        if p.after_differs and p.before_differs is False:
            by.append("same input: the pass made the difference")
        elif p.after_differs and p.before_differs:
            by.append("its input differs too")
        out.append((mark[0], f"  {mark[1]:9} {p.lifecycle}" + (f" · {p.where}" if p.where else "")
                    + (f"  ({', '.join(by)})" if by else ""), p))
    if more:
        out.append(("dim", f"    ... {more} more (--all)"))
    one = [p for p in c.passes if not p.both]
    if one:
        out.append(("dim", f"  {len(one)} pass(es) on one side only: "
                           + ", ".join(f"{p.lifecycle} ({'A' if p.a else 'B'})" for p in one[:4])
                           + (" …" if len(one) > 4 else "")))
    if not c.passes:
        out.append(("dim", "  no pass or piece recorded a graph"))
    return list(out)


def _factors(m: Any) -> list[str]:
    """A miss's differing components in the user's terms (model/analysis/cache_terms.py)."""
    if not getattr(m, "differs", None) or getattr(m, "nearest", None) is None:
        return []
    from magi_tui.model.analysis.cache_terms import factors

    return [f.text for f in factors(m.differs, None, m.nearest.graph, m.miss.graph)]


def compare_text(c: Comparison, show_all: bool = False) -> str:
    return "\n".join(t for _s, t in compare_lines(c, show_all))
