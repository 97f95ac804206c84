"""The graph-break worklist of the analysis: break sites deduplicated by graph-break id / reason and the
user's file:line, from the timeline's events (their graph_break.txt on a budget) or, for an upstream
run, from ``compiled_functions/``'s resume functions. Functions of the analysis' gathered state (:class:`~.state.AnalyserState`)."""

from __future__ import annotations

from typing import Any

from magi_tui.model.analysis.checks.evidence import (
    _first_line,
    _hints,
    _int,
    _read_event_file,
    _s,
    event_attrs,
)
from magi_tui.model.analysis.checks.results import (
    BreakEntry,
)
from magi_tui.model.analysis.checks.state import AnalyserState
from magi_tui.model.analysis.frames import parse_compile_id


def worklist(s: AnalyserState) -> list[BreakEntry]:
    run = s.run
    entries: dict[tuple, BreakEntry] = {}
    for item in s.t.graph_breaks:
        # here, not at the top: a run without graph breaks (most headless starts) never loads torch's
        # text grammar; after the first break this is a look-up in sys.modules
        from magi_format.torchtext import graph_break_report, is_library

        ev = item.event
        a = event_attrs(run, ev)
        info: dict[str, Any] = {}
        hints = _hints(a.get("hints"))
        attr_file = _s(a.get("user_file"))
        if not (a.get("gb_id") and attr_file and a.get("explanation") and hints) or (
                attr_file and is_library(attr_file)):
            # torch's own report is the whole truth (runs recorded before hints were kept whole, a
            # break inside a library whose caller is wanted): one grammar, magi_format.torchtext
            text = _read_event_file(run, ev, "graph_break.txt", s.budget)
            if text:
                info = graph_break_report(text)
        gb_id = _s(a.get("gb_id")) or info.get("gb_id")
        uf = a.get("user_frame")
        file = attr_file or info.get("break_file")
        line = _int(a.get("user_line"))
        if line is None:
            line = info.get("break_line")
        if file is None and isinstance(uf, str) and ":" in uf:
            f0, _, l0 = uf.rpartition(":")
            file, line = f0, _int(l0)
        gb_type = _s(a.get("gb_type")) or info.get("gb_type")
        # the specific cause: torch's gb_type ("Unsupported Tensor.item() call ..."), else its reason
        reason = gb_type or _s(a.get("reason")) or info.get("reason") or item.reason or "graph break"
        key = (gb_id or _first_line(reason), file, line)
        be = entries.get(key)
        if be is None:
            expl = info.get("explanation") or _s(a.get("explanation"))
            be = entries[key] = BreakEntry(
                gb_id, gb_type, _first_line(reason), expl, info.get("hints") or hints, file, line,
                _s(a.get("user_function")) or info.get("break_function"),
                _s(a.get("source_line")) or info.get("break_source"))
            if file is not None:
                be.in_user_code = not is_library(file)
                if be.in_user_code:
                    be.call_site = (file, line, be.function, be.source_line)
                elif info.get("user_file") and not is_library(info["user_file"]):
                    be.call_site = (info["user_file"], info.get("user_line"), info.get("user_function"),
                                    info.get("source_line"))
        be.count += 1
        if ev.compile_id and ev.compile_id not in be.compile_ids:
            be.compile_ids.append(ev.compile_id)
        fr = s.frames.get((parse_compile_id(ev.compile_id) or ("",))[0])
        if fr is not None:
            fr.graph_breaks += 1
            if fr.frame not in be.frames:
                be.frames.append(fr.frame)
        if len(be.events) < 1000:
            be.events.append(ev)
    if not entries:  # upstream runs: the resume functions are the evidence
        for bs in s.cf.breaks:
            be = BreakEntry(None, None, "graph break (a resume function continues after it)", None, [],
                            bs.file, bs.line, bs.function, None, count=bs.count, resume_fns=bs.resume_fns)
            entries[(bs.file, bs.line, bs.function)] = be
            for rel in bs.parents:
                row = s.frames.get("cf:" + rel)
                if row is not None:
                    row.graph_breaks += bs.count
                    be.frames.append(row.frame)
    out = list(entries.values())
    out.sort(key=lambda b: (-b.count, b.file or "", b.line or 0))
    return out
