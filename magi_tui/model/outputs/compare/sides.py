"""One side of a comparison: what one run says, indexed (:func:`side_facts`: compiles per frame with
their op count and graph hash, passes in order), and frames aligned by code object (:func:`align_frames`)."""

from __future__ import annotations

from collections import Counter, deque
from typing import Any, Callable

from msgspec import Struct, field

from magi_tui.model.analysis.checks import Analysis, FrameRow, TimelineFold, analyse, event_attrs
from magi_tui.model.analysis.frames import parse_compile_id
from magi_tui.model.events import Event
from magi_tui.model.outputs.compare.graphs import GraphRef, _base, _GraphReader, graph_ref
from magi_tui.model.run import RunModel

_SKIP_LIFECYCLES = frozenset({"compile", "dynamo_capture"})


# -- one side ----------------------------------------------------------------------------------------
class CompileFacts(Struct):
    """One compile of a frame: its id, the Dynamo graph's op count and hash, its time and status."""

    compile_id: str
    frame_compile_id: int
    op_count: int | None = None
    graph_hash: str | None = None
    graph_hash_source: str | None = None   # "recorded" (an attribute) or "captured_graph" (computed)
    compile_s: float | None = None
    status: str | None = None                # ok | failed | None (never closed)

    def as_json(self) -> dict[str, Any]:
        return {"compile_id": self.compile_id, "op_count": self.op_count, "graph_hash": self.graph_hash,
                "compile_s": None if self.compile_s is None else round(self.compile_s, 6),
                "status": self.status}


class PassFacts(Struct):
    key: tuple
    lifecycle: str
    subgraph_index: int | None
    graph_index: int | None
    compile_id: str | None
    before: GraphRef | None
    after: GraphRef | None
    changed_graph: bool | None = None      # the pass changed its graph (before vs after) on this side


class Side(Struct):
    """What one run says, indexed for comparison."""

    run: RunModel
    analysis: Analysis
    frames: list[FrameRow]
    #: frame key -> frame compile id -> facts
    compiles: dict[str, dict[int, CompileFacts]] = field(default_factory=dict)
    #: frame key -> passes in order
    passes: dict[str | None, list[PassFacts]] = field(default_factory=dict)

    @property
    def label(self) -> str:
        return str(self.run.path)


def _int(v: Any) -> int | None:
    return v if isinstance(v, int) and not isinstance(v, bool) else None


class SideIndex:
    """What a comparison reads from every event of one run, one event at a time in file order: compiles per
    frame (op count, recorded graph hash, time, status) and passes in order. A ``dynamo_capture`` graph
    to hash is only noted here; :func:`side_facts` reads it, so the graph reader's budget is spent in
    the order the sides are made, whether the run was kept whole or streamed. Also every compile id in
    order of appearance (a rank's aspects of a run dir)."""

    def __init__(self) -> None:
        self.run: RunModel | None = None
        self.compiles: dict[str, dict[int, CompileFacts]] = {}
        self.passes: dict[str | None, list[PassFacts]] = {}
        self.compile_ids: dict[str, None] = {}
        #: captured graphs to hash (:func:`side_facts`), in order
        self.to_hash: list[tuple[CompileFacts, GraphRef | None]] = []
        self._occurrences: Counter = Counter()

    def bind(self, run: RunModel) -> None:
        self.run = run

    def add(self, ev: Event) -> None:
        run = self.run
        assert run is not None, "bind(run) first"
        if ev.compile_id:
            self.compile_ids.setdefault(ev.compile_id, None)
        p = parse_compile_id(ev.compile_id)
        fkey = p[0] if p else None
        if p is not None and fkey is not None and (ev.lifecycle == "compile" or ev.frag == "dynamo_capture"):
            cf = self.compiles.setdefault(fkey, {}).get(p[1])
            if cf is None:
                cf = self.compiles[fkey][p[1]] = CompileFacts(f"{fkey}/{p[1]}", p[1])
            if ev.lifecycle == "compile" and ev.phase in ("after", "failed"):
                attrs = event_attrs(run, ev)
                n = _int(attrs.get("graph_op_count"))
                if n is not None and (cf.op_count is None or n > 0):
                    cf.op_count = n
                h = attrs.get("graph_hash")
                if isinstance(h, str) and h:
                    cf.graph_hash, cf.graph_hash_source = h, "recorded"
                d = ev.duration_ms if ev.duration_ms is not None else (ev.span.duration_ms if ev.span else None)
                if d is not None:
                    cf.compile_s = (cf.compile_s or 0.0) + d / 1000.0
                cf.status = "ok" if ev.phase == "after" and cf.status != "failed" else "failed"
            elif ev.frag == "dynamo_capture" and ev.phase == "after":
                self.to_hash.append((cf, GraphRef(run, ev, "captured_graph.py")
                                     if "captured_graph.py" in (ev.files or ()) else graph_ref(run, ev)))
            return
        span = ev.span
        if ev.phase != "after" or span is None or span.before is None or span.end is not ev:
            return
        lc = span.lifecycle
        if lc in _SKIP_LIFECYCLES:
            return
        after = graph_ref(run, ev)
        if after is None:
            return
        before = graph_ref(run, span.before)
        gi = ev.graph_index if ev.graph_index is not None else span.before.graph_index
        base = (fkey, p[1] if p else None, ev.subgraph_index, gi, lc)
        self._occurrences[base] += 1
        pf = PassFacts(base + (self._occurrences[base],), lc, ev.subgraph_index, gi, ev.compile_id, before, after)
        self.passes.setdefault(fkey, []).append(pf)


class SideFold(TimelineFold):
    """The analysis' fold and a :class:`SideIndex` in one pass, for a load that streams
    (``RunModel.load(fold=SideFold())``: ``compare``, ``ranks``): a comparison reads no event list."""

    def __init__(self) -> None:
        super().__init__()
        self.side = SideIndex()

    def bind(self, run: RunModel) -> None:
        super().bind(run)
        self.side.bind(run)

    def add(self, ev: Event) -> None:
        super().add(ev)
        self.side.add(ev)


def side_index(run: RunModel) -> SideIndex:
    """The run's :class:`SideIndex`: the one its streamed load made, else one over its events."""
    fold = getattr(run, "fold", None)
    if isinstance(fold, SideFold):
        return fold.side
    index = SideIndex()
    index.bind(run)
    for ev in run.events:
        index.add(ev)
    return index


def side_facts(run: RunModel, reader: _GraphReader | None = None) -> Side:
    """Index one run: its analysis, compiles per frame (op count, graph hash) and its passes."""
    reader = reader or _GraphReader()
    a = analyse(run)
    index = side_index(run)
    for cf, ref in index.to_hash:  # what Dynamo captured, hashed where no hash was recorded
        if cf.graph_hash_source == "recorded":
            continue
        h = reader.digest(ref)
        if h is not None:
            cf.graph_hash, cf.graph_hash_source = h, "captured_graph"
    return Side(run, a, list(a.frames), index.compiles, index.passes)


# -- aligning frames ---------------------------------------------------------------------------------
def align_frames(a: list[FrameRow], b: list[FrameRow]) -> list[tuple[FrameRow | None, FrameRow | None]]:
    """Pairs of frames, one per code object: by name + file name + line, then by name when that is
    unique among the frames left on both sides, then by order of appearance among same-named frames.

    Linear in frames (a 100k-frame log against another): frames are kept by position, a key's
    candidates in a queue, and what is paired leaves by one pass (not ``list.remove`` per pair)."""
    left = list(range(len(a)))   # positions in ``a`` / ``b`` not paired yet, in order
    right = list(range(len(b)))
    paired: list[tuple[int | None, int | None]] = []

    def take(keyf: Callable[[FrameRow], tuple | None]) -> None:
        nonlocal left, right
        idx: dict[tuple, deque[int]] = {}
        for j in right:
            k = keyf(b[j])
            if k is not None:
                idx.setdefault(k, deque()).append(j)
        taken: set[int] = set()
        rest: list[int] = []
        for i in left:
            k = keyf(a[i])
            q = idx.get(k) if k is not None else None
            if q:
                j = q.popleft()
                paired.append((i, j))
                taken.add(j)
            else:
                rest.append(i)
        left = rest
        right = [j for j in right if j not in taken]

    take(lambda r: (r.name, _base(r.file), r.line) if r.file and r.line is not None else None)
    names_a = Counter(a[i].name for i in left)
    names_b = Counter(b[j].name for j in right)
    take(lambda r: (r.name,) if names_a[r.name] == 1 and names_b[r.name] == 1 else None)
    take(lambda r: (r.name,))
    paired.extend((i, None) for i in left)
    paired.extend((None, j) for j in right)
    last = len(a) + len(b)  # after every frame: an unpaired side sorts last
    paired.sort(key=lambda p: (last if p[0] is None else p[0], last if p[1] is None else p[1]))
    return [(None if i is None else a[i], None if j is None else b[j]) for i, j in paired]
