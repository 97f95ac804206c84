"""The summary above the findings: status and counts, what an empty run means, the checks with their
marks, and where to look first."""

from __future__ import annotations

from magi_format.text import literal
from magi_tui.model.checks import Analysis
from magi_tui.model.run import RunModel
from magi_tui.model.triage_sections.data import Span, first_failure

#: each check level's mark, in the panel and the text report alike
CHECK_ICONS = {"ok": "✓", "warn": "⚠", "fail": "✗", "unknown": "?"}
CHECK_ROLES = {"ok": "good", "warn": "warn", "fail": "worst"}
STATUS_ROLES = {"failed": "worst", "incomplete": "worst", "recovered": "warn", "degraded": "key", "ok": "good",
                "empty": "warn"}



def triage_summary(run: RunModel, a: Analysis) -> list[Span]:
    """The panel's summary: status and counts (a fact the source cannot know is ``?``, never a zero), what
    an empty run means, the checks, and where to look first."""
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
    for c in a.checks:
        out += [Span(f"  {CHECK_ICONS.get(c.level, '?')} ", CHECK_ROLES.get(c.level, "")),
                Span(literal(c.message, 300) + "\n")]
    ff = first_failure(a)
    if ff is not None:
        look = ff.head
        out += [Span("Look first: ", "strong"), Span(f"#{look.event.index} {literal(look.event.name, 60)}", "worst")]
        if look.exception_type:
            out.append(Span(f"  {literal(look.exception_type, 50)}"))
        # a run dir's event folder; a log's LOG:line (a log has no folders: it named one inside timeline_events/)
        where = look.folder if run.has_event_folders else run.where(look.event, look.folder)
        if where:
            out.append(Span(f"\n  {literal(where)}", "dim"))
        out.append(Span("   (f jumps there)", "dim"))
    elif a.worklist:
        gb = a.worklist[0]
        out += [Span("Look first: ", "strong"), Span(f"graph break ×{gb.count} at {literal(gb.where, 80)}", "warn")]
    return out
