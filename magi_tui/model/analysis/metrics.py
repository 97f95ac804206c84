"""Per compile id, what tlparse spreads over its ``compilation_metrics_N.html`` pages, as data: times,
guard and graph counts, restart / recompile / failure reasons, the dynamic-shape facts (symbols, their
sources, specialisations, shape guards, each with the user line that caused it), the guards file, the
user call stack that triggered the compile (and the trie of those stacks), the compile-phase spans
(torch's ``chromium_event``) and the runnable reproducers (``fx_graph_runnable``).

Read from the run's events and their small files (``metrics.json``, ``phases.json``, ``user_stack.txt``)
through :mod:`magi_tui.model.sources.files`, so the same code serves our runs and TORCH_TRACE logs (whose events
are the tracer's own mapping). Times: torch's ``entire_frame_compile_time_s`` (total),
``backend_compile_time_s`` (AOT + Inductor), ``inductor_compile_time_s``, ``code_gen_time_s``; the
Dynamo and AOT columns are derived (total − backend, backend − Inductor) and say so in ``as_json``.

:func:`write_reproducer` copies one compile's ``fx_graph_runnable.py`` next to the run (never into its
event folders, never over an existing file) and returns the command that runs it.
"""

from __future__ import annotations

import math
import os
import re
import shlex
from pathlib import Path
from typing import Any

from msgspec import Struct, field

from magi_format.names import (
    AFTER_BUILD_GUARDS,
    FX_GRAPH_RUNNABLE,
    INDUCTOR_PROVENANCE,
    RECOMPILE_LIMIT_HIT,
    SHAPE_GUARD,
    SHAPE_SPECIALIZATION,
    SHAPE_SYMBOL,
)
from magi_format.torchtext import is_torch_or_runpy
from magi_tui.model.analysis.frames import parse_compile_id, short_frame
from magi_tui.model.analysis.provenance import KernelProvenance, StackFrame, parse_stack
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel
from magi_tui.model.sources.files import json_or_none
from magi_tui.model.sources.safejson import metrics_or_none

MAX_FILE_READS = 3000
MAX_SMALL = 256 * 1024
MAX_REPRODUCER = 64 << 20


class ShapeFact(Struct):
    """A dynamic-shape record of one compile: a symbol created, a specialisation, a shape guard."""

    kind: str                  # symbol | specialization | guard
    text: str                  # "s77 = 5 in [2, int_oo] from L['x'].size()[0]" / "s0 = 4 (…)" / "s77 > 3"
    user_frame: str | None     # "file:line"
    source_line: str | None
    seq: int

    def as_json(self) -> dict[str, Any]:
        return {"kind": self.kind, "text": self.text, "user_frame": self.user_frame,
                "source_line": self.source_line}


class Phase(Struct):
    name: str
    start_s: float             # from the compile's first span
    dur_s: float
    depth: int


#: the compile id of a log's work outside any compile id (AOTInductor, export), tlparse's spelling
NO_COMPILE_ID = "-/-"


class CompileInfo(Struct):
    compile_id: str
    frame: str | None = None
    attempt: int = 0
    metrics: dict[str, Any] = field(default_factory=dict)
    bwd_metrics: dict[str, Any] = field(default_factory=dict)
    has_metrics: bool = False
    recompile_reasons: list[str] = field(default_factory=list)
    restart_reasons: list[str] = field(default_factory=list)
    shapes: list[ShapeFact] = field(default_factory=list)
    guards: Event | None = None            # the after_build_guards event (guards.txt)
    guard_latency_us: float | None = None
    leaf_guard_count: int | None = None
    stack: list[StackFrame] = field(default_factory=list)
    phases: list[Phase] = field(default_factory=list)
    runnables: list[Event] = field(default_factory=list)   # fx_graph_runnable events
    provenance: list[Event] = field(default_factory=list)  # inductor_provenance events (--provenance)
    close: Event | None = None             # after_compile / failed_compile
    start: Event | None = None             # before_compile
    post_grad: list[Event] = field(default_factory=list)  # after_post_grad_passes (the graphs kernels fuse)
    #: the frame hit its recompile limit here (the ``recompile_limit_hit`` event's attributes): torch
    #: compiled nothing and, on torch 2.13, logged no ``compilation_metrics`` for it
    limit_hit: dict[str, Any] | None = None
    #: backend work of this compile done after Dynamo returned (top-level lifecycles of its compile id
    #: besides ``compile``: a piecewise backend compiles its pieces at the first call), seconds
    after_return_s: float | None = None

    # -- numbers, in torch's terms -------------------------------------------------------------
    def _f(self, key: str, bwd: bool = False) -> float | None:
        return _num((self.bwd_metrics if bwd else self.metrics).get(key))

    def _i(self, key: str) -> int | None:
        v = self.metrics.get(key)
        return v if isinstance(v, int) and not isinstance(v, bool) else None

    @property
    def total_s(self) -> float | None:
        return self._f("entire_frame_compile_time_s")

    @property
    def backend_s(self) -> float | None:
        return self._f("backend_compile_time_s")

    @property
    def inductor_s(self) -> float | None:
        return self._f("inductor_compile_time_s")

    @property
    def codegen_s(self) -> float | None:
        return self._f("code_gen_time_s")

    @property
    def dynamo_s(self) -> float | None:
        """Dynamo's share: the frame's compile time less the backend's."""
        t, b = self.total_s, self.backend_s
        if t is None:
            return None
        return max(0.0, t - (b or 0.0))

    @property
    def aot_s(self) -> float | None:
        """AOT autograd's share: the backend's time less Inductor's (all of it with another backend)."""
        b = self.backend_s
        if b is None:
            return None
        return max(0.0, b - (self.inductor_s or 0.0))

    @property
    def backward_s(self) -> float | None:
        return self._f("inductor_compile_time_s", bwd=True)

    @property
    def guard_count(self) -> int | None:
        return self._i("guard_count")

    @property
    def shape_env_guard_count(self) -> int | None:
        return self._i("shape_env_guard_count")

    @property
    def graph_op_count(self) -> int | None:
        return self._i("graph_op_count")

    @property
    def graph_node_count(self) -> int | None:
        return self._i("graph_node_count")

    @property
    def graph_input_count(self) -> int | None:
        return self._i("graph_input_count")

    @property
    def fail_type(self) -> str | None:
        v = self.metrics.get("fail_type")
        return str(v) if v else None

    @property
    def fail_reason(self) -> str | None:
        v = self.metrics.get("fail_reason")
        return str(v) if v else None

    @property
    def status(self) -> str:
        """tlparse's stack-trie colours in words, in its order: ``failed`` (fail_type), ``empty`` (0 ops),
        ``restarted`` (restart reasons: a graph break), ``ok``; ``ran eagerly``: the frame hit its recompile
        limit here and the call ran uncompiled (triage's "ran eagerly" verdict; ``failed`` where the limit was
        made an error); ``no metrics``: the compile never closed."""
        if self.limit_hit is not None:
            return "failed" if self.limit_hit.get("fallback") == "error" else "ran eagerly"
        if not self.has_metrics:
            return "no metrics"
        if self.fail_type:
            return "failed"
        if self.graph_op_count == 0:
            return "empty"
        if self.restart_reasons:
            return "restarted"
        return "ok"

    @property
    def tlparse_id(self) -> str:
        """tlparse's spelling, with the final attempt: ``[0/0_1]`` (tlparse has no reset generation: ``R1/0/0``
        is its ``[0/0]`` too)."""
        cid = self.compile_id[self.compile_id.index("/") + 1:] if self.compile_id[:1] == "R" else self.compile_id
        return f"[{cid}{'_' + str(self.attempt) if self.attempt else ''}]"

    @property
    def symbols(self) -> list[ShapeFact]:
        return [s for s in self.shapes if s.kind == "symbol"]

    @property
    def specializations(self) -> list[ShapeFact]:
        return [s for s in self.shapes if s.kind == "specialization"]

    @property
    def shape_guards(self) -> list[ShapeFact]:
        return [s for s in self.shapes if s.kind == "guard"]

    def as_json(self) -> dict[str, Any]:
        return {
            "compile_id": self.compile_id, "tlparse_id": self.tlparse_id, "frame": self.frame,
            "attempt": self.attempt, "status": self.status,
            "times_s": {"total": self.total_s, "dynamo": self.dynamo_s, "aot": self.aot_s,
                        "after_return": None if self.after_return_s is None else round(self.after_return_s, 6),
                        "inductor": self.inductor_s, "codegen": self.codegen_s, "backend": self.backend_s,
                        "dynamo_before_restart": self._f("dynamo_time_before_restart_s"),
                        "backward_inductor": self.backward_s},
            "derived": ["times_s.dynamo = total - backend", "times_s.aot = backend - inductor"],
            "guard_count": self.guard_count, "shape_env_guard_count": self.shape_env_guard_count,
            "leaf_guard_count": self.leaf_guard_count, "guard_latency_us": self.guard_latency_us,
            "graph_op_count": self.graph_op_count, "graph_node_count": self.graph_node_count,
            "graph_input_count": self.graph_input_count, "cache_size": self._i("cache_size"),
            "restart_reasons": self.restart_reasons, "recompile_reasons": self.recompile_reasons,
            "fail_type": self.fail_type, "fail_reason": self.fail_reason,
            "recompile_limit_hit": None if self.limit_hit is None else {
                k: self.limit_hit.get(k) for k in ("recompile_limit", "limit_type", "reason", "fallback")},
            "symbols": [s.as_json() for s in self.symbols],
            "specializations": [s.as_json() for s in self.specializations],
            "shape_guards": [s.as_json() for s in self.shape_guards],
            "stack": [f.where + f" in {f.function}" for f in self.stack],
            "phases": [{"name": p.name, "start_s": p.start_s, "dur_s": p.dur_s, "depth": p.depth}
                       for p in self.phases],
            "reproducers": len(self.runnables),
        }


def _root(run: RunModel) -> Path | None:
    """The folder a run's files must stay in (a log's files are the reader's own copies: no root)."""
    return None if run.reader.holds_event_files else run.path


def _read(run: RunModel, ev: Event, name: str, budget: list[int], limit: int = MAX_SMALL) -> str | None:
    """The text of one of the event's files; each try spends one of ``budget`` (found or not)."""
    if budget[0] <= 0 or name not in (ev.files or ()):
        return None
    budget[0] -= 1
    return run.file_text(ev, name, limit)


def _num(v: Any) -> float | None:
    """A finite number (NaN, infinities and 400-digit ints are no times), else None."""
    if not isinstance(v, (int, float)) or isinstance(v, bool):
        return None
    try:
        f = float(v)
    except OverflowError:
        return None
    return f if math.isfinite(f) else None


_TRACER_RUNNER = re.compile(r"(^|[/\\])tracer[/\\](__main__|session|capture|lifecycle|piecewise)\.py$")


def _is_framework(filename: str) -> bool:
    """torch's, runpy's, frozen frames (the tracer's one rule) and the tracer's own (``python -m tracer``)."""
    return is_torch_or_runpy(filename) or bool(_TRACER_RUNNER.search(filename))


def _fact(kind: str, a: dict[str, Any], seq: int) -> ShapeFact:
    if kind == "symbol":
        text = f"{a.get('symbol', '?')} = {a.get('val', '?')}"
        if a.get("vr"):
            text += f" in {a['vr']}"
        if a.get("unbacked"):
            text += " (unbacked)"
        elif a.get("source"):
            text += f" from {a['source']}"
    elif kind == "specialization":
        srcs = a.get("sources") if isinstance(a.get("sources"), list) else []
        text = f"{a.get('symbol', '?')} = {a.get('value', '?')}"
        if srcs:
            text += f" ({', '.join(str(s) for s in srcs)})"
        if a.get("reason"):
            text += f": {a['reason']}"
    else:
        text = str(a.get("expr", "?"))
    uf = a.get("user_frame")
    sl = a.get("source_line")
    return ShapeFact(kind, text, str(uf) if uf else None, str(sl) if sl else None, seq)


_SHAPE_KINDS = {SHAPE_SYMBOL: "symbol", SHAPE_SPECIALIZATION: "specialization", SHAPE_GUARD: "guard"}


class CompileInfoFold:
    """:func:`compile_infos` one event at a time, in file order: what ``magi-tui metrics`` needs from every
    event, so that its load can stream (``RunModel.load(fold=CompileInfoFold())``: each event folded in,
    then dropped unless a compile keeps it — its start and end, the post-grad, runnable, provenance and
    guards events it shows), as ``triage`` does with the analysis' fold. A run loaded so has no event list
    and no analysis: only the metrics (:func:`compile_infos`, :func:`kernel_provenance`) read it."""

    def __init__(self) -> None:
        self.infos: dict[str, CompileInfo] = {}
        self.budget = [MAX_FILE_READS]
        self.run: RunModel | None = None
        self.outside = False

    def bind(self, run: RunModel) -> None:
        """The run whose files and attributes are read as its events come (``RunModel.load`` calls it)."""
        self.run = run
        self.outside = run.is_torch_trace  # a log's records without a compile id: AOTInductor / export, tlparse's [-/-]

    def add(self, ev: Event) -> None:
        run, budget, infos = self.run, self.budget, self.infos
        assert run is not None, "bind(run) first"
        cid = ev.compile_id
        if not cid and self.outside:
            cid = NO_COMPILE_ID
        elif not cid or parse_compile_id(cid) is None:
            return
        info = infos.get(cid)
        if info is None:
            info = infos[cid] = CompileInfo(cid)
        frag, phase, lc = ev.frag, ev.phase, ev.lifecycle
        if lc == "post_grad_passes" and phase == "after":
            info.post_grad.append(ev)
            return
        if lc == "compile" and phase == "before":
            info.start = ev
            info.stack = parse_stack(_read(run, ev, "user_stack.txt", budget))
            f = run.attributes(ev).get("frame")
            info.frame = info.frame or (str(f) if f else None)
            return
        if lc == "compile" and phase in ("after", "failed"):
            _close(run, info, ev, budget)
            return
        if lc not in (None, "compile", "backward_compile") and phase in ("after", "failed") \
                and ev.span is not None and ev.span.depth == 0:
            d = ev.duration_ms if ev.duration_ms is not None else ev.span.duration_ms
            if d is not None:
                info.after_return_s = (info.after_return_s or 0.0) + d / 1000.0
        if lc == "backward_compile" and phase in ("after", "failed"):
            m = metrics_or_none(_read(run, ev, "metrics.json", budget))
            info.bwd_metrics = m if isinstance(m, dict) else {}
            return
        if phase is not None:
            return
        if frag in _SHAPE_KINDS:
            fact = _fact(_SHAPE_KINDS[frag], run.attributes(ev), ev.seq)
            # a restarted compile traces again and creates the same symbol (guard) again: one fact, once
            if not any((f.kind, f.text, f.user_frame) == (fact.kind, fact.text, fact.user_frame) for f in info.shapes):
                info.shapes.append(fact)
        elif frag == FX_GRAPH_RUNNABLE:
            info.runnables.append(ev)
        elif frag == INDUCTOR_PROVENANCE:
            info.provenance.append(ev)
        elif ev.name.endswith(AFTER_BUILD_GUARDS):
            a = run.attributes(ev)
            info.guards = ev
            info.guard_latency_us = _num(a.get("guard_latency_us"))
            lg = a.get("leaf_guard_count")
            info.leaf_guard_count = lg if isinstance(lg, int) and not isinstance(lg, bool) else None
        elif frag == RECOMPILE_LIMIT_HIT:
            a = run.attributes(ev)
            info.limit_hit = a
            info.frame = info.frame or (str(a["frame"]) if a.get("frame") else None)
        elif ev.kind == "recompile":
            a = run.attributes(ev)
            info.frame = info.frame or (str(a["frame"]) if a.get("frame") else None)
            reasons = rs if isinstance(rs := a.get("reasons"), list) else [a.get("reason")]
            info.recompile_reasons = [str(r) for r in reasons if r]
        elif ev.kind == "restart":
            a = run.attributes(ev)
            r = a.get("restart_reason") or a.get("reason")
            if r and str(r) not in info.restart_reasons:
                info.restart_reasons.append(str(r))

    def result(self) -> list[CompileInfo]:
        """One :class:`CompileInfo` per compile id, in the order the compiles started."""
        infos = self.infos
        aot = infos.get(NO_COMPILE_ID)
        if aot is not None and aot.close is None and not aot.provenance:
            del infos[NO_COMPILE_ID]  # only a JIT log's loose records (torch_version, …): no compile of its own
        return list(infos.values())


def compile_infos(run: RunModel) -> list[CompileInfo]:
    """One :class:`CompileInfo` per compile id, in the order the compiles started. Never raises on the
    run's contents (a missing or broken file is a missing number). A run whose load streamed through a
    :class:`CompileInfoFold` answers from it; any other is folded here, from its events."""
    fold = getattr(run, "fold", None)
    if isinstance(fold, CompileInfoFold):
        return fold.result()
    fold = CompileInfoFold()
    fold.bind(run)
    add = fold.add
    for ev in list(run.events):
        add(ev)
    return fold.result()


def _close(run: RunModel, info: CompileInfo, ev: Event, budget: list[int]) -> None:
    info.close = ev
    a = run.attributes(ev)
    if a.get("frame"):
        info.frame = str(a["frame"])
    if isinstance(a.get("attempt"), int):
        info.attempt = a["attempt"]
    m = metrics_or_none(_read(run, ev, "metrics.json", budget))
    if isinstance(m, dict):
        info.metrics = m
        info.has_metrics = True
        rr = m.get("restart_reasons")
        if isinstance(rr, str):
            rr = [rr] if rr else []
        for r in rr if isinstance(rr, list) else []:
            if str(r) not in info.restart_reasons:
                info.restart_reasons.append(str(r))
        if not info.frame and m.get("co_name"):
            info.frame = str(m["co_name"])
    ph = json_or_none(_read(run, ev, "phases.json", budget))
    if isinstance(ph, list):
        for p in ph:
            if not isinstance(p, dict):
                continue
            start, dur = _num(p.get("start_us")), _num(p.get("dur_us"))
            if start is None or dur is None or start < 0 or dur < 0:
                continue
            depth = d if isinstance(d := p.get("depth"), int) else 0
            info.phases.append(Phase(str(p.get("name", "?")), start / 1e6, dur / 1e6, depth))


# -- Inductor provenance: magi_tui.model.analysis.provenance (kernel -> post-grad nodes -> pre-grad nodes) ---------


# -- the stack trie ---------------------------------------------------------------------------------

class TrieNode(Struct):
    frame: StackFrame | None
    children: list["TrieNode"] = field(default_factory=list)
    compiles: list[CompileInfo] = field(default_factory=list)  # compiles whose stack ends here

    def child(self, frame: StackFrame) -> "TrieNode":
        for c in self.children:
            if c.frame == frame:
                return c
        node = TrieNode(frame)
        self.children.append(node)
        return node

    def lines(self) -> list[tuple[int, "TrieNode"]]:
        """Depth-first: (depth, node), the root left out."""
        out: list[tuple[int, TrieNode]] = []

        def walk(n: TrieNode, d: int) -> None:
            for c in n.children:
                out.append((d, c))
                walk(c, d + 1)
        walk(self, 0)
        return out


def stack_trie(infos: list[CompileInfo]) -> TrieNode:
    """tlparse's stack trie: the user frames of each compile's ``dynamo_start`` stack (torch's, runpy's
    and frozen frames left out), common prefixes merged; each compile hangs off its innermost frame."""
    root = TrieNode(None)
    for info in infos:
        node = root
        for fr in info.stack:
            if _is_framework(fr.filename):
                continue
            node = node.child(StackFrame(fr.filename, fr.line, fr.function, fr.code))
        node.compiles.append(info)
    return root


# -- the runnable reproducer ------------------------------------------------------------------------

def reproducer_name(run: RunModel, info: CompileInfo, ev: Event) -> str:
    cid = info.compile_id.replace("!", "ca").replace("/", "_")
    bw = "_backward" if run.attributes(ev).get("backward") else ""
    k = info.runnables.index(ev) if ev in info.runnables else 0
    return f"repro_{cid}{bw}{'_' + str(k) if k else ''}.py"


def write_reproducer(run: RunModel, info: CompileInfo, ev: Event | None = None) -> tuple[Path | None, str]:
    """Write the compile's ``fx_graph_runnable.py`` next to the run (beside the run directory, or beside
    the log) as ``repro_<compile id>.py``. Returns ``(path, command to run it)`` or ``(None, why not)``:
    no reproducer recorded, the file exists already (never overwritten), or the disk said no."""
    if ev is None:
        if not info.runnables:
            return None, f"compile {info.compile_id} has no fx_graph_runnable (Inductor did not compile it)"
        ev = next((e for e in info.runnables if not run.attributes(e).get("backward")), info.runnables[0])
    text = _read(run, ev, "fx_graph_runnable.py", [1], MAX_REPRODUCER + 1)
    if text is None:
        return None, "the reproducer file cannot be read"
    if len(text.encode("utf-8", "replace")) > MAX_REPRODUCER:
        return None, "the reproducer is larger than 64 MB: not written"
    target = run.path.parent / reproducer_name(run, info, ev)
    try:
        fd = os.open(target, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0), 0o644)
    except FileExistsError:
        return None, f"{target} exists already: not overwritten"
    except OSError as exc:
        return None, f"cannot write {target}: {exc.strerror or type(exc).__name__}"
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
    except OSError as exc:
        return None, f"cannot write {target}: {exc.strerror or type(exc).__name__}"
    return target, f"python {shlex.quote(str(target))}"


# -- what the screen shows (plain text lines with a style word, like ranks_lines) -------------------

STATUS_STYLE = {"ok": "ok", "restarted": "warn", "failed": "fail", "empty": "dim", "no metrics": "warn",
                "ran eagerly": "warn"}
SHORT_STATUS = {"ok": "ok", "restarted": "restart", "failed": "FAILED", "empty": "empty", "no metrics": "open",
                "ran eagerly": "eager"}


def guards_lines(run: RunModel, info: CompileInfo, limit: int = 16_000) -> list[str] | None:
    """The compile's guards (``guards.txt``: torch's C++ guard tree), at most ``limit`` bytes; None if
    there is none."""
    if info.guards is None:
        return None
    text = _read(run, info.guards, "guards.txt", [1], limit)
    return None if text is None else text.splitlines()


def _s(v: float | None) -> str:
    return "-" if v is None else (f"{v:.3f}s" if v < 100 else f"{v:.0f}s")


def phase_bars(phases: list[Phase], width: int = 78, name_width: int = 24) -> list[str]:
    """Each phase as a bar on one time axis (start and duration to scale), nested names indented."""
    if not phases:
        return []
    end = max(p.start_s + p.dur_s for p in phases) or 1e-9
    bar_w = max(8, width - name_width - 9)
    out = []
    for p in phases:
        a = int(p.start_s / end * bar_w)
        b = max(a + 1, int(round((p.start_s + p.dur_s) / end * bar_w)))
        name = ("  " * max(0, p.depth - 1) + p.name)[:name_width]
        out.append(f"{name:<{name_width}} {' ' * a}{'█' * (b - a)}{' ' * (bar_w - b)} {_s(p.dur_s):>7}")
    return out


def table_row(i: CompileInfo) -> str:
    """One row of the screen's table (fits 80 columns)."""
    def t(v: float | None) -> str:
        return "-" if v is None else (f"{v:.2f}" if v < 100 else f"{v:.0f}")
    frame = short_frame(str(i.frame or "?"))
    frame = frame if len(frame) <= 11 else frame[:10] + "…"
    return (f"{i.tlparse_id:<9}{frame:<12}{SHORT_STATUS[i.status]:<8}{t(i.total_s):>6}{t(i.dynamo_s):>6}"
            f"{t(i.aot_s):>6}{t(i.inductor_s):>6}{t(i.codegen_s):>6}{_n(i.guard_count):>6}"
            f"{_n(i.graph_op_count):>5}{_n(i.graph_node_count):>6}")


#: the table's header (seconds: total, Dynamo, AOT, Inductor, codegen)
TABLE_HEAD = (f"{'compile':<9}{'frame':<12}{'status':<8}{'total':>6}{'dyn':>6}{'aot':>6}{'ind':>6}"
              f"{'cg':>6}{'guard':>6}{'ops':>5}{'nodes':>6}")


def detail_lines(info: CompileInfo, guards: list[str] | None = None, width: int = 78,
                 max_guards: int = 60, provenance: list[KernelProvenance] | None = None) -> list[tuple[str, str]]:
    """The detail of one compile: ``(style, text)`` lines (style: head, ok, warn, fail, dim, text)."""
    out: list[tuple[str, str]] = []
    st = info.status
    out.append(("head", f"{info.tlparse_id} {info.frame or '?'}  {st}"))
    if info.has_metrics:
        out.append(("text", f"time {_s(info.total_s)} = Dynamo {_s(info.dynamo_s)} + AOT {_s(info.aot_s)} + "
                            f"Inductor {_s(info.inductor_s)} (codegen {_s(info.codegen_s)})"))
        if info.after_return_s:
            out.append(("text", f"  + backend after Dynamo returned {_s(info.after_return_s)} (its pieces compiled "
                                "at the first call: not in torch's metrics, part of this frame's time)"))
        if info._f("dynamo_time_before_restart_s"):
            out.append(("text", f"  Dynamo before the restart {_s(info._f('dynamo_time_before_restart_s'))}"))
        if info.backward_s is not None or info.bwd_metrics:
            out.append(("text", f"  backward (Inductor) {_s(info.backward_s)}"))
        g = f"guards {_n(info.guard_count)} (shape env {_n(info.shape_env_guard_count)}"
        if info.leaf_guard_count is not None:
            g += f", leaf {info.leaf_guard_count}"
        if info.guard_latency_us is not None:
            g += f", check {info.guard_latency_us:.1f} µs"
        out.append(("text", g + f")  graph {_n(info.graph_op_count)} ops, {_n(info.graph_node_count)} nodes, "
                                f"{_n(info.graph_input_count)} inputs"))
    elif info.limit_hit is None:
        out.append(("warn", "no compilation_metrics: the compile never closed"))
    if info.limit_hit is not None:
        lim = info.limit_hit.get("recompile_limit")
        out.append(("warn", f"hit the recompile limit ({'?' if lim is None else lim}): nothing compiled, "
                            + ("the call failed" if info.limit_hit.get("fallback") == "error" else "the call ran eagerly")))
    if info.fail_type:
        out.append(("fail", f"failed: {info.fail_type}"))
        for ln in (info.fail_reason or "").splitlines()[:6]:
            out.append(("fail", "  " + ln))
    for r in info.restart_reasons:
        out.append(("warn", f"restart: {(r.splitlines() or [''])[0]}"))
    for r in info.recompile_reasons:
        out.append(("warn", f"recompile: {(r.splitlines() or [''])[0]}"))
    if info.shapes:
        out.append(("head", "dynamic shapes"))
        label = {"symbol": "symbol", "specialization": "specialized", "guard": "guard"}
        for f in info.shapes:
            out.append(("text", f"  {label[f.kind]:<11} {f.text}"))
            if f.user_frame:
                where = f.user_frame.rsplit("/", 1)[-1]
                out.append(("dim", f"              at {where}" + (f"  {f.source_line}" if f.source_line else "")))
    if info.runnables:
        out.append(("head", "reproducer"))
        out.append(("text", f"  {len(info.runnables)} fx_graph_runnable: r writes it next to the run"))
    if provenance:
        out.append(("head", "provenance: kernel -> post-grad nodes -> pre-grad nodes -> user line"))
        out.append(("dim", "  (run screen: cursor on a kernel in the output code, P: its nodes; K: node -> kernel)"))
        for k in provenance:
            out.append(("text", f"  {k.kernel}" + ("  (backward)" if k.backward else "")))
            if k.post_grad:
                out.append(("text", f"      post-grad: {', '.join(k.post_grad)}"))
            if k.pre_grad:
                out.append(("text", f"      pre-grad:  {', '.join(k.pre_grad)}"))
            for ln in k.user_lines[:6]:
                out.append(("dim", f"      at {ln}"))
    elif info.runnables and not info.provenance:
        out.append(("dim", "  (kernel provenance: record with python -m tracer --provenance)"))
    if info.phases:
        out.append(("head", "compile phases"))
        out.extend(("text", ln) for ln in phase_bars(info.phases, width))
    if info.stack:
        out.append(("head", "triggered from"))
        user = [f for f in info.stack if not _is_framework(f.filename)] or info.stack
        for sf in user[-8:]:
            out.append(("text", f"  {sf.filename.rsplit('/', 1)[-1]}:{sf.line} in {sf.function}"))
            if sf.code:
                out.append(("dim", f"      {sf.code}"))
    if guards is not None:
        out.append(("head", f"guards ({len(guards)} lines)"))
        out.extend(("dim", "  " + ln) for ln in guards[:max_guards])
        if len(guards) > max_guards:
            out.append(("dim", f"  … {len(guards) - max_guards} more lines (the guards file of this compile)"))
    return out


def trie_lines(root: TrieNode) -> list[tuple[str, str]]:
    """The stack trie as indented lines; each compile id at the frame its stack ends in."""
    out: list[tuple[str, str]] = [("head", "stack trie: which user call stacks triggered which compiles")]
    for depth, node in root.lines():
        f = node.frame
        assert f is not None
        ids = " ".join(f"{c.tlparse_id}{'' if c.status == 'ok' else ' ' + c.status}" for c in node.compiles)
        out.append(("fail" if any(c.status == "failed" for c in node.compiles) else "text",
                    f"{'  ' * depth}{f.filename.rsplit('/', 1)[-1]}:{f.line} {f.function}" + (f"  {ids}" if ids else "")))
    for c in root.compiles:
        out.append(("dim", f"(no stack) {c.tlparse_id}"))
    return out


# -- headless ---------------------------------------------------------------------------------------

def _fmt(v: float | None) -> str:
    return "-" if v is None else f"{v:.3f}"


def _n(v: int | None) -> str:
    return "-" if v is None else str(v)


def metrics_table(infos: list[CompileInfo]) -> list[str]:
    """The table ``magi-tui metrics`` prints: one line per compile id."""
    head = f"{'compile':<10} {'frame':<24} {'status':<11} {'total':>7} {'dynamo':>7} {'aot':>7} " \
           f"{'induct':>7} {'codegen':>7} {'guards':>6} {'ops':>5} {'nodes':>5}"
    out = [head]
    for i in infos:
        out.append(f"{i.tlparse_id:<10} {short_frame(str(i.frame or '?'))[:24]:<24} {i.status:<11} {_fmt(i.total_s):>7} "
                   f"{_fmt(i.dynamo_s):>7} {_fmt(i.aot_s):>7} {_fmt(i.inductor_s):>7} {_fmt(i.codegen_s):>7} "
                   f"{_n(i.guard_count):>6} {_n(i.graph_op_count):>5} {_n(i.graph_node_count):>5}")
        for r in i.restart_reasons:
            out.append(f"    restart: {r.splitlines()[0] if r.splitlines() else r}")
        if i.fail_type:
            out.append(f"    failed: {i.fail_type}: {(i.fail_reason or '').splitlines()[0] if i.fail_reason else ''}")
        for s in i.shapes:
            out.append(f"    {s.kind}: {s.text}" + (f"  at {s.user_frame}" if s.user_frame else ""))
    return out
