"""The summary above the findings: status and counts, what an empty run means, the checks with their
marks, and where to look first."""

from __future__ import annotations

from magi_format.text import literal
from magi_tui.model.analysis.checks import Analysis
from magi_tui.model.outputs.triage_sections.data import Span, first_failure
from magi_tui.model.run import RunModel

#: each check level's mark, in the panel and the text report alike
CHECK_ICONS = {"ok": "✓", "warn": "⚠", "fail": "✗", "unknown": "?"}
CHECK_ROLES = {"ok": "good", "warn": "warn", "fail": "worst"}
#: the summary lists failed checks, then warnings and unknowns, then the ok ones (the panel shows the first
#: few lines: what a user looks for is what is wrong), each level in the rules' order
CHECK_ORDER = {"fail": 0, "warn": 1, "unknown": 1, "ok": 2}
STATUS_ROLES = {"failed": "worst", "incomplete": "worst", "interrupted": "worst", "recovered": "warn",
                "degraded": "key", "ok": "good", "empty": "warn"}



def triage_summary(run: RunModel, a: Analysis) -> list[Span]:
    """The panel's summary: status and counts (a fact the source cannot know is ``?``, never a zero), what
    an empty run means, where to look first, then the checks."""
    out = [Span("Status ", "strong"), Span(a.status.upper(), STATUS_ROLES.get(a.status, "info"))]
    cc = a.cache["counts"]
    nr = a.not_recorded

    def n(fact: str, value: object) -> str:
        return "?" if fact in nr else str(value)
    out.append(Span(f"   {len(run.events)} events · {len(a.problems)} failures · {n('restarts', len(a.restarts))} "
                    f"restarts · {n('recompiles', len(a.recompiles))} recompiles · "
                    f"{n('graph_breaks', a.graph_break_total)} breaks · "
                    + ("cache not recorded\n" if "cache" in nr else
                       f"cache {cc['hits']} hit / {cc['misses']} miss / {cc['bypasses']} bypass\n")))
    if a.empty_note:
        out.append(Span("  " + literal(a.empty_note) + "\n", "warn"))
        if a.log_tail:
            out.append(Span(f"  last lines of {literal(a.log_path or '', 80)}:\n", "dim"))
            out += [Span("    | " + literal(ln, 160) + "\n", "dim") for ln in a.log_tail[-6:]]
    look = look_first(run, a)
    if look:  # right under the status: the summary is cut at half the panel, the checks may be many
        out += [*look, Span("\n")]
    for c in sorted(a.checks, key=lambda c: CHECK_ORDER.get(c.level, 1)):   # what is wrong first
        out += [Span(f"  {CHECK_ICONS.get(c.level, '?')} ", CHECK_ROLES.get(c.level, "")),
                Span(literal(c.message, 300) + "\n")]
    return out


def _place(path: str | None, line: int | None) -> str | None:
    """``name.py:line`` first (it fits 80 columns), the path in full on the line below."""
    if not path:
        return None
    return f"{path.rsplit('/', 1)[-1]}:{line}" if line is not None else path.rsplit("/", 1)[-1]


def look_first(run: RunModel, a: Analysis) -> list[Span]:
    """"Look first": the one place to start, always with its file:line when the run knows one — a crash
    that reached the program, the first failure, a recompile limit that raised, the graph break a model
    that compiled nothing gave up at, else the most frequent graph break."""
    o = a.outcome
    e = o.exception if o is not None else None
    ff = first_failure(a)
    place: str | None = None
    path: str | None = None
    what: list[Span] = []
    jump = ""
    if e is not None and e.origin == "compiled_code":
        path, line = (e.call_file, e.call_line) if e.call_file else (e.file, e.line)
        place = _place(path, line)
        what = [Span(f"compile {literal(e.compile_id or '?', 20)} raised {literal(e.short_type, 40)} at run time", "worst"),
                Span("  (magi-tui bisect finds the layer)", "dim")]
    elif ff is not None:
        look = ff.head
        src = a.failure_sources.get(id(ff))
        if src and src[0]:
            path, place = src[0], _place(src[0], src[1])
        what = [Span(f"#{look.event.index} {literal(look.event.name, 60)}", "worst")]
        if look.exception_type:  # bold too: readable without colour (NO_COLOR)
            what.append(Span(f"  {literal(look.exception_type, 50)}", "strong"))
        # a run dir's event folder; a log's LOG:line (a log has no folders: it named one inside timeline_events/)
        folder = look.folder if run.has_event_folders else run.where(look.event, look.folder)
        if folder:
            what.append(Span(f"\n  {literal(folder)}", "dim"))
        jump = "   (f jumps there)"
    elif any(f.limit_raised for f in a.frames):
        f = next(f for f in a.frames if f.limit_raised)
        path, place = f.file, _place(f.file, f.line)
        what = [Span(f"{literal(f.frame, 60)} hit its recompile limit and raised", "worst")]
    elif e is not None and e.origin == "compile":
        path, place = e.file, _place(e.file, e.line)
        what = [Span(f"torch.compile raised {literal(e.short_type, 40)}", "worst")]
    elif a.compiled_nothing is not None:
        cn = a.compiled_nothing
        if cn.place is not None:
            path, place = cn.place[0], _place(*cn.place)
        what = [Span("the model compiled nothing", "warn")]
        if cn.advice:
            what.append(Span(f": {literal(cn.advice, 200)}"))
    elif a.ran_eagerly:
        r = a.ran_eagerly[0]
        path, place = r.file, _place(r.file, r.line)
        what = [Span(f"{literal(r.frame, 60)} ran eagerly ({r.cause.replace('_', ' ')})", "warn")]
    elif a.worklist:
        gb = a.worklist[0]
        path, place = gb.file, _place(gb.file, gb.line)
        what = [Span(f"graph break ×{gb.count}: {literal(gb.reason, 60)}", "warn")]
    if not what:
        return []
    out = [Span("Look first: ", "strong")]
    if place:
        out.append(Span(literal(place, 60) + "  ", "key"))
    out += what
    if path and place and path != place.rsplit(":", 1)[0]:
        out.append(Span(f"\n  {literal(path, 200)}", "dim"))
    if jump:
        out.append(Span(jump, "dim"))
    return out
