"""Recompiles explained: torch's reasons per recompile, guard differences between consecutive compiles
(or cache entries), what automatic dynamic shapes made dynamic, and each frame's recompile limit. Functions of the
analysis' gathered state (:class:`~.state.AnalyserState`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from magi_format.lazyre import lazy_re
from magi_tui.model.analysis.checks.evidence import (
    _int,
    _read_event_file,
    _s,
    event_attrs,
)
from magi_tui.model.analysis.checks.results import (
    RecompileInfo,
    made_dynamic_for,
)
from magi_tui.model.analysis.checks.state import AnalyserState
from magi_tui.model.analysis.frames import CfFrame, parse_compile_id

if TYPE_CHECKING:
    from magi_tui.model.analysis.guards import GuardDiff, Reason

# the guard grammar (magi_tui.model.analysis.guards) is imported below where a recompile or a guard file is read:
# a headless start on a run without recompiles never loads it

_SYMBOL_SOURCE = lazy_re(r"^(?P<src>.+?)\.size\(\)\[(?P<dim>\d+)\]$")
#: the advice whose value torch's automatic dynamic shapes make dynamic: its ``*_automatic`` entry says so
#: (a global or an nn.Module int only where a setting let torch make it dynamic: the int's entry)
_AUTOMATIC_ADVICE = {"size": "size_automatic", "int": "int_automatic", "float": "float_automatic",
                     "stride": "stride_automatic", "global_int": "int_automatic", "module_int": "int_automatic"}


def _diff_for(s: AnalyserState, name: str, compile_index: int, total: int | None) -> tuple[GuardDiff | None, tuple | None]:
    """Guards of compile ``compile_index`` (0-based per frame) vs the one before, when the frame's
    cache entries can be matched (one folder of that name; entries newest first)."""
    same = [f for f in s.cf.by_name(name) if f.compiles]
    if len(same) != 1 or compile_index < 1:
        return None, None
    cf = same[0]
    n = cf.compiles
    if total is not None and total != n:
        return None, None  # entries missing (evicted, failed compiles): no safe match
    newer_i, older_i = n - 1 - compile_index, n - compile_index
    if newer_i < 0 or older_i >= n:
        return None, None
    return _diff_entries(s, cf, older_i, newer_i)

def _diff_compiles(s: AnalyserState, older_cid: str, newer_cid: str) -> tuple[GuardDiff | None, tuple | None]:
    """The guards ``after_build_guards`` recorded for two compile ids, compared (logs and our runs)."""
    g = s.fold.guards
    a_ev, b_ev = g.get(older_cid), g.get(newer_cid)
    if a_ev is None or b_ev is None:
        return None, None
    a = _read_event_file(s.run, a_ev, "guards.txt", s.budget)
    b = _read_event_file(s.run, b_ev, "guards.txt", s.budget)
    if a is None or b is None:
        return None, None
    names = (f"compile {older_cid}", f"compile {newer_cid}")
    from magi_tui.model.analysis.guards import diff_guards

    return diff_guards(a.splitlines(), b.splitlines(), names[0] + " guards", names[1] + " guards"), names

def _diff_entries(s: AnalyserState, cf: CfFrame, older_i: int, newer_i: int
                  ) -> tuple[GuardDiff | None, tuple[str, str] | None]:
    ent = {e.index: e for e in cf.entries}
    older, newer = ent.get(older_i), ent.get(newer_i)
    if older is None or newer is None:
        return None, None
    from magi_tui.model.analysis.guards import diff_guards, read_guards

    base = s.run.path
    a, b = read_guards(older.guards, base), read_guards(newer.guards, base)
    names = (f"{cf.rel}/entry_{older_i}", f"{cf.rel}/entry_{newer_i}")
    if a is None or b is None:
        return None, names
    return diff_guards(a, b, names[0] + "/guards.txt", names[1] + "/guards.txt"), names

def recompiles(s: AnalyserState) -> list[RecompileInfo]:
    run = s.run
    out: list[RecompileInfo] = []
    for item in s.t.recompiles:
        from magi_tui.model.analysis.guards import parse_reason

        ev = item.event
        a = event_attrs(run, ev)
        raw = a.get("reasons")
        reasons = [str(r) for r in raw] if isinstance(raw, list) else []
        if not reasons:
            r0 = _s(a.get("reason")) or item.reason
            if r0:
                reasons = [r0]
        parsed = [parse_reason(r) for r in reasons]
        p = parse_compile_id(ev.compile_id)
        row = s.frames.get(p[0]) if p else None
        name = (row.name if row else None) or _s(a.get("frame")) or "?"
        lim = _int(a.get("recompile_limit"))
        if row is not None and lim is not None:
            row.recompile_limit, row.limit_recorded = lim, True
        info = RecompileInfo(row.frame if row else name, row.key if row else None, ev.compile_id, parsed,
                         event=ev)
        if ev.compile_id and parsed:
            info.dynamic_sources, info.made_dynamic = _dynamic_sources(s, ev.compile_id)
            pr = parsed[0]
            if pr.advice in _AUTOMATIC_ADVICE and made_dynamic_for(pr, info.made_dynamic):
                # the advice for what torch made dynamic in this recompile, with everything it made
                # dynamic together: one entry alone can be specialised back by another input of the same
                # length (input_ids and attention_mask)
                from magi_tui.model.analysis.guards import advise

                pr.advice = _AUTOMATIC_ADVICE[pr.advice]
                pr.suggestion = advise(pr.advice, pr.subject, pr.expected, pr.actual, pr.index, hint=pr.hint,
                                       sources=info.dynamic_sources)
        if p is not None and name != "?":
            info.guard_diff, info.entries = _diff_for(s, name, p[1], row.compiles if row else None)
        if info.guard_diff is None and parsed and parsed[0].entry_compile_id and ev.compile_id:
            # no compiled_functions/ (a TORCH_TRACE log): the guards each compile built, the failed
            # entry's against the new compile's
            info.guard_diff, _names = _diff_compiles(s, parsed[0].entry_compile_id, ev.compile_id)
        if info.guard_diff is not None and info.primary is not None:
            _explain_function_change(info)
        if p is not None:
            prim = info.primary
            d = info.guard_diff
            if prim is not None and prim.actual is None and prim.expected is not None and d is not None:
                # torch names the expected value only (``n == 3``): the newer entry's guard has the actual
                act = next((b for x, b in d.changes if x == prim.expected), None)
                if act is not None:
                    prim.actual = act
        out.append(info)
    if not out:
        for f in s.cf.frames:
            for k in range(1, f.compiles):
                # entry_<n-1> is the first compile: recompile k compares entry_{n-k} with entry_{n-1-k}
                d, names = _diff_entries(s, f, f.compiles - k, f.compiles - 1 - k)
                why: list[Reason] = []
                if d is not None:
                    from magi_tui.model.analysis.guards import reason_from_diff

                    r = reason_from_diff(d)
                    if r is not None:
                        why.append(r)
                out.append(RecompileInfo(f.code.label, "cf:" + f.rel, None, why, d, None, names))
    return out

def _dynamic_sources(s: AnalyserState, compile_id: str) -> tuple[list[str], list[str]]:
    """``TORCH_COMPILE_DYNAMIC_SOURCES`` entries for the backed symbols compile ``compile_id`` created
    (sizes and ints: torch ignores the setting for floats and strides, tests/advice), and every source
    those symbols stand for (floats and strides too)."""
    out: list[str] = []
    made: list[str] = []
    for sev in s.fold.symbols.get(compile_id, ())[:200]:
        a = event_attrs(s.run, sev)
        src = _s(a.get("source"))
        if not src or a.get("unbacked"):
            continue
        if src not in made:
            made.append(src)
        if (_s(a.get("symbol")) or "").startswith("zf") or "___" in src:
            continue  # a float (``zf0``), or a value computed in the frame: no dynamic source
        m = _SYMBOL_SOURCE.match(src)
        entry = f"{m.group('src')}:{m.group('dim')}" if m else (src if "(" not in src else None)
        if entry and "," not in entry and entry not in out:
            out.append(entry)
    return sorted(out), made

def limits(s: AnalyserState) -> None:
    run = s.run
    for item in s.t.recompile_limit_hits:
        ev = item.event
        a = event_attrs(run, ev)
        p = parse_compile_id(ev.compile_id)
        row = s.frames.get(p[0]) if p else None
        if row is None:
            fname = _s(a.get("frame"))
            row = next((r for r in s.frames.values() if fname and r.name == fname), None)
        for rc in s._recompile_list:
            if rc.event is not None and ev.compile_id and rc.compile_id == ev.compile_id \
                    and rc.event.session == ev.session:
                rc.refused = True
        if row is not None:
            row.limit_hit = True
            row.limit_event = ev
            lim = _int(a.get("recompile_limit"))
            if lim is not None:
                row.recompile_limit, row.limit_recorded = lim, True


def _explain_function_change(info: RecompileInfo) -> None:
    """A function the frame calls is another one in this entry (its code differs in the guard diff): say
    so first, whatever guard torch named (transformers' shared ``wrapper``: torch names grad mode when a
    second model runs under no_grad, the identity of ``func`` when it does not)."""
    from magi_tui.model.analysis.guards import function_changed_text, functions_changed, subject_of, user_expr

    assert info.guard_diff is not None and info.primary is not None
    changed = functions_changed(info.guard_diff)
    if not changed:
        return
    info.functions_changed = changed
    src, older, newer = changed[0]
    prim = info.primary
    text = function_changed_text(user_expr(subject_of(src)) or src, older, newer)
    if prim.kind != "function" and prim.suggestion:
        text += f". Torch named another guard first: {prim.suggestion}"
    prim.suggestion = text
