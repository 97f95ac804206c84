"""Every silent fallback in one place: what made code run uncompiled, or compile worse, without an error.

One list, each item with where (the frame's file:line, the compile id) and how much (calls, when the run
recorded them — ``runtime.json`` of our tracer):

* ``compiled_nothing``: no compile captured a graph with an op: the model ran entirely as Python;
* ``recompile_limit``: a frame hit its recompile limit; the calls it then ran eagerly (not one whose limit
  hit raised into the program: that is a failure);
* ``eager_calls``: calls a frame ran eagerly after a cache miss no entry served, with no limit hit
  (a ``set_stance("eager_on_recompile")``, a recompile Dynamo skipped);
* ``eager_calls_unattributed``: eager calls whose frame could not be told (two frames from one call site);
* ``nothing_compiled``: a compile that ended with no guarded code (``has_guarded_code: false`` in torch's
  compilation metrics): the frame runs as plain Python, with the failure or skip torch gave (not a compile
  whose error reached the program, ``fullgraph=True``'s ``Unsupported`` included, nor one cut by Ctrl-C:
  those are errors, said as such; a crash ``suppress_errors`` hid is listed: the program went on eagerly);
* ``cache_bypass``: a compile that could not use the FX-graph / AOTAutograd cache, and why;
* ``fallback_kernel``: an op Inductor could not lower and ran as an ATen kernel (``Using FallbackKernel``);
  ``perf_hint``: Inductor's other performance hints — both recorded by our tracer, once per op / hint and
  compile; not those Inductor gives on every CPU compile by design (:data:`EXPECTED_ON_CPU`);
* ``cudagraph_skip``: a graph compiled for CUDA graphs (``mode="reduce-overhead"``) that Inductor runs without
  them, and why (``cudagraph_skip_reason`` in torch's compilation metrics, from the tracer and from logs).

What no recorded source holds yet is listed in :data:`NOT_RECORDED` (and in the JSON), so an empty
section is not read as "none happened".
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from msgspec import Struct

from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.json_stream import Lazy

#: metrics.json files read for ``nothing_compiled``, at most
#: the tracer's event for one of Inductor's performance hints (``tracer/capture.py``), and how many are kept
PERF_HINT_NAME = "fullgraph_perf_hint"
MAX_HINTS = 2000
_FALLBACK_KERNEL = "Using FallbackKernel: "

NOT_RECORDED = [
    "ops Inductor ran as eager fallback kernels and its performance hints, from a TORCH_TRACE log (torch "
    "logs them as text, not in the structured trace; our tracer records them)",
    "fallback kernels and hints of a graph served from the FX-graph cache (Inductor does not lower it "
    "again, so it gives no hint)",
    "cudagraph skips decided at run time, after the compile closed (a new input shape or a mutation seen in "
    "a later call): torch logs them as text, not in compilation_metrics",
    "calls of a frame Dynamo skipped whole before tracing it (no tensors, skipfiles): torch records no "
    "event for them",
]


#: hints Inductor gives on every CPU compile, by design: nothing fell back, nothing to change (kept out of the
#: silent fallbacks). Padding is a GPU optimisation; SDPA on CPU is ATen's own fused kernel.
EXPECTED_ON_CPU = ("Skip comprehensive padding on CPU", "_scaled_dot_product_flash_attention_for_cpu",
                   "_scaled_dot_product_fused_attention_overrideable")


def expected_on_cpu(hint: str) -> bool:
    return any(m in hint for m in EXPECTED_ON_CPU)


class Fallback(Struct):
    kind: str
    what: str
    frame: str | None = None
    file: str | None = None
    line: int | None = None
    compile_id: str | None = None
    calls: int | None = None         # calls that ran eagerly because of it (None: not counted)
    index: int | None = None         # the timeline event that says it, when one does
    event: Any = None                # that event (the triage panel jumps to it)

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "what": self.what, "frame": self.frame, "file": self.file, "line": self.line,
                "compile_id": self.compile_id, "calls": self.calls, "index": self.index}

    def text(self) -> str:
        where = f"{self.frame}" if self.frame else (f"compile {self.compile_id}" if self.compile_id else "")
        n = "" if self.calls is None else f" — {self.calls} eager call(s)"
        return f"{self.kind}: {self.what}" + (f" [{where}]" if where else "") + n


def _frame_of(frames: Mapping[str, Any], cid: str | None) -> Any:
    p = parse_compile_id(cid)
    return frames.get(p[0]) if p else None


def fallbacks(run: Any, analysis: Any, frames: Mapping[str, Any], unguarded: list, hint_events: Sequence = (),
              cudagraph_skips: Sequence = ()) -> list[Fallback]:
    """The run's silent fallbacks, in the order a performance engineer reads them: eager calls first.
    ``frames``: the analysis' frame rows by key (the analysis' own table, not a second one of 100k rows);
    ``unguarded``: ``(compile end event, metrics.json)`` of the compiles that left no guarded code (read
    once, by the analysis' compile time); ``hint_events``: the tracer's ``perf_hint`` events;
    ``cudagraph_skips``: ``(compile end event, metrics.json)`` whose metrics name a cudagraph skip reason."""
    out: list[Fallback] = []
    rt = analysis.runtime
    for f in analysis.frames:
        if f.limit_raised:
            continue  # torch raised into the program: a failure (the checks say so), not a silent fallback
        if f.limit_hit:
            out.append(Fallback("recompile_limit", f"hit the recompile limit ({f.recompile_limit}): later calls "
                                "no entry serves run eagerly", f.frame, f.file, f.line,
                                f.limit_event.compile_id if f.limit_event is not None else None, calls=f.eager_calls,
                                index=f.limit_event.index if f.limit_event is not None else None,
                                event=f.limit_event))
        elif f.eager_calls:
            out.append(Fallback("eager_calls", "ran eagerly after a cache miss that no new entry served (a "
                                "stance such as eager_on_recompile, or a skipped recompile)", f.frame, f.file,
                                f.line, calls=f.eager_calls))
    if rt is not None and rt.eager_unattributed:
        out.append(Fallback("eager_calls_unattributed", "eager calls after a cache miss, frame not told apart "
                            "(frames sharing a call site)", calls=rt.eager_unattributed))
    outcome = analysis.outcome
    # compiles whose error reached the program (it died of it): errors, said as such, nothing silent. Under
    # ``suppress_errors`` a backend crash runs the frame eagerly and the program goes on: that one is listed.
    problems = run.triage.problems
    raised = {c.head.event.compile_id for c in problems if outcome is not None and outcome.torch_failed}
    raised |= {c.head.event.compile_id for c in problems if c.head.exception_type.rsplit(".", 1)[-1] == "Unsupported"}
    cn = analysis.compiled_nothing
    if cn is not None:
        out.append(Fallback("compiled_nothing", f"the model compiled nothing: no graph with an op in {len(cn.frames)} "
                            "frame(s), everything ran eagerly", index=cn.event.index if cn.event is not None else None,
                            event=cn.event))
    for ev, m in unguarded:
        if ev.compile_id in raised or (outcome is not None and outcome.interrupted):
            continue  # an error (a failure, or Ctrl-C in the compile), said as one: nothing silent about it
        why = m.get("fail_reason") or m.get("fail_type") or "Dynamo produced no guarded code"
        f = _frame_of(frames, ev.compile_id)
        out.append(Fallback("nothing_compiled", f"nothing compiled: {str(why).splitlines()[0][:300]}",
                            f.frame if f else m.get("co_name"), f.file if f else m.get("co_filename"),
                            f.line if f else m.get("co_firstlineno"), ev.compile_id, index=ev.index, event=ev))
    for ev, m in cudagraph_skips:
        why = str(m.get("cudagraph_skip_reason")).strip().splitlines()[0][:300]
        f = _frame_of(frames, ev.compile_id)
        out.append(Fallback("cudagraph_skip", f"ran without CUDA graphs: {why}", f.frame if f else m.get("co_name"),
                            f.file if f else m.get("co_filename"), f.line if f else m.get("co_firstlineno"),
                            ev.compile_id, index=ev.index, event=ev))
    for item in run.triage.cache_bypasses:
        ev = item.event
        f = _frame_of(frames, ev.compile_id)
        cache = (ev.summary or {}).get("cache") or "cache"
        out.append(Fallback("cache_bypass", f"{cache} bypassed: {str(item.reason or '?').splitlines()[0][:300]}",
                            f.frame if f else None, f.file if f else None, f.line if f else None, ev.compile_id,
                            index=ev.index, event=ev))
    seen: set[tuple] = set()
    for ev in hint_events:
        try:
            a = run.attributes(ev)
        except Exception:
            a = {}
        hint = str((a if isinstance(a, dict) else {}).get("hint") or "").strip()
        if not hint or (hint, ev.compile_id) in seen or expected_on_cpu(hint):
            continue
        seen.add((hint, ev.compile_id))
        f = _frame_of(frames, ev.compile_id)
        if hint.startswith(_FALLBACK_KERNEL):
            kind, what = "fallback_kernel", f"Inductor ran {hint[len(_FALLBACK_KERNEL):][:200]} as an eager ATen kernel"
        else:
            kind, what = "perf_hint", hint.splitlines()[0][:300]
        out.append(Fallback(kind, what, f.frame if f else None, f.file if f else None, f.line if f else None,
                            ev.compile_id, index=ev.index, event=ev))
    return out


def fallbacks_json(items: list[Fallback]) -> dict[str, Any]:
    """``triage --json``'s ``fallbacks``; ``items`` a :class:`~magi_tui.model.json_stream.Lazy` (made as
    it is written)."""
    counts: dict[str, int] = {}
    for it in items:
        counts[it.kind] = counts.get(it.kind, 0) + 1
    return {"items": Lazy(it.as_json() for it in items), "counts": counts, "not_recorded": list(NOT_RECORDED)}
