"""The cache lookups and the compile time of the analysis (counts, reasons, phases, per frame and
piece). Functions of the analysis' gathered state (:class:`~.state.AnalyserState`)."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable
from typing import Any

from magi_tui.model.analysis.checks.evidence import (
    _first_line,
    _read_event_file,
)
from magi_tui.model.analysis.checks.results import Analysis, FrameRow
from magi_tui.model.analysis.checks.state import AnalyserState
from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.sources.safejson import metrics_or_none


def cache(s: AnalyserState) -> dict[str, Any]:
    t = s.t
    reasons: dict[str, Counter] = {k: Counter() for k in ("hit", "miss", "bypass", "skipped_store")}
    for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses),
                         ("skipped_store", t.cache_skipped_stores)):
        for it in items:
            reasons[state][_first_line(it.reason) or "-"] += 1
            if state in ("hit", "miss", "bypass"):
                row = s.frames.get((parse_compile_id(it.event.compile_id) or ("",))[0])
                if row is not None:
                    if state == "hit":
                        row.cache_hits += 1
                    elif state == "miss":
                        row.cache_misses += 1
                    else:
                        row.cache_bypasses += 1
                        row.add_bypass_reason(_first_line(it.reason) or "-")
    by_cache: dict[str, Counter] = {}
    for state, items in (("hit", t.cache_hits), ("miss", t.cache_misses), ("bypass", t.cache_bypasses)):
        for it in items:
            c = (it.event.summary or {}).get("cache") or (
                "magi" if it.event.lifecycle == "compiler_manager_load" else "-")
            by_cache.setdefault(c, Counter())[state] += 1
    h, m, b = len(t.cache_hits), len(t.cache_misses), len(t.cache_bypasses)
    if not (h or m or b):
        state = "none"
    elif b and not (h or m):
        state = "bypassed"
    elif h and not m:
        state = "warm"
    elif m and not h:
        state = "cold"
    else:
        state = "mixed"
    return {
        "state": state,
        "counts": {"hits": h, "misses": m, "bypasses": b, "stores": len(t.cache_stores),
                   "skipped_stores": len(t.cache_skipped_stores)},
        "reasons": {k: dict(v.most_common()) for k, v in reasons.items()},
        "by_cache": {k: dict(v) for k, v in by_cache.items()},
        "hits": [i.as_json() for i in t.cache_hits],
        "misses": [i.as_json() for i in t.cache_misses],
        "bypasses": [i.as_json() for i in t.cache_bypasses],
        "stores": [i.as_json() for i in t.cache_stores],
        "skipped_stores": [i.as_json() for i in t.cache_skipped_stores],
    }

# compile time ------------------------------------------------------------------------------
def compile_time(s: AnalyserState) -> dict[str, Any]:
    run = s.run
    fold = s.fold
    spans, pieces, top, top_n = fold.spans, fold.pieces, fold.top, fold.top_n
    metrics = {"Dynamo tracing (frame minus backend)": 0.0, "backend compile (AOT + Inductor)": 0.0,
               "Inductor compile": 0.0, "Inductor codegen": 0.0}
    seen_metrics = False
    for ev in fold.metrics_events:
        m = metrics_or_none(_read_event_file(run, ev, "metrics.json", s.budget))  # typed, bounded, or None
        if isinstance(m, dict):
            seen_metrics = True
            if m.get("has_guarded_code") is False:  # for the silent fallbacks: read once, here
                s.unguarded.append((ev, m))
            if str(m.get("cudagraph_skip_reason") or "").strip():  # (a blank reason names none)
                s.cudagraph_skips.append((ev, m))
            ent = m.get("entire_frame_compile_time_s")
            be = m.get("backend_compile_time_s")
            num = (int, float)
            if isinstance(ent, num) and not isinstance(ent, bool):
                metrics["Dynamo tracing (frame minus backend)"] += ent - (be if isinstance(be, num) else 0)
            if isinstance(be, num) and not isinstance(be, bool):
                metrics["backend compile (AOT + Inductor)"] += be
            for k, label in (("inductor_compile_time_s", "Inductor compile"),
                             ("code_gen_time_s", "Inductor codegen")):
                v = m.get(k)
                if isinstance(v, num) and not isinstance(v, bool):
                    metrics[label] += v
    phases = [{"phase": name, "seconds": round(v[0], 6), "count": v[1], "source": "spans"}
              for name, v in spans.items()]
    if seen_metrics:
        phases += [{"phase": k, "seconds": round(v, 6), "count": None, "source": "metrics"}
                   for k, v in metrics.items() if v > 0]
    phases.sort(key=lambda p: -p["seconds"])
    # top-level time no frame owns (no compile id): so the frames (:func:`frame_seconds`) and it add up to
    # the total; summed in the frames' order, each frame's seconds as :func:`frame_seconds` rounds them
    timed = [r.compile_s for r in s.frames.values() if r.compile_s is not None]
    unattributed = round(max(0.0, top - sum(round(sec, 6) for sec in timed)), 6) if top_n and timed else None
    per_piece = [{"piece": k, "seconds": round(v[1], 6), "lifecycle": "+".join(v[2]), "count": v[3]}
                 for k, v in sorted(pieces.items())]
    return {"total_s": round(top, 6) if top_n else None, "phases": phases,
            "unattributed_s": unattributed,
            "per_piece": per_piece,
            "note": "lifecycles nest (a pass runs inside its backend call): phase seconds are inclusive "
                    "and do not add up to the total"}


def frame_seconds(rows: Iterable[FrameRow], *, by_key: bool = True) -> tuple[dict[str, float], dict[str, float]]:
    """Compile seconds per frame label and per frame id (``rows`` in the order the frames were found),
    made when an output asks for them (the JSON, the panel's ranking), not held by every analysis: two maps
    of 100k entries on a 100k-frame log. ``by_key`` False: the second map is left empty (the panel ranks
    labels only).

    Keyed by the frame's id too: two frames may share a label (the same function compiled again after
    ``torch._dynamo.reset()``, frame 0 then R1/0), and neither's seconds may overwrite the other's. One
    float object per row is shared by both maps where rounding leaves the row's seconds as they are."""
    keys: dict[str, float] = {}
    frames: dict[str, float] = {}
    for r in rows:
        sec = r.compile_s
        if sec is not None:
            rounded = round(sec, 6)
            kept = sec if rounded == sec else rounded
            if by_key:
                keys[r.key] = kept
            got = frames.get(r.frame)
            if got is None:
                frames[r.frame] = kept if sec else round(0.0 + sec, 6)  # (-0.0 sums to 0.0)
            else:
                frames[r.frame] = round(got + sec, 6)
    return frames, keys


def compile_time_json(a: Analysis) -> dict[str, Any]:
    """The analysis' ``compile_time`` with its per-frame maps (:func:`frame_seconds`) in their place, after
    ``phases``: the ``compile_time`` of ``triage --json`` (docs/HEADLESS.md)."""
    per_frame, per_frame_key = frame_seconds(a.frames_found)
    out: dict[str, Any] = {}
    for k, v in a.compile_time.items():
        out[k] = v
        if k == "phases":
            out["per_frame"], out["per_frame_key"] = per_frame, per_frame_key
    return out
