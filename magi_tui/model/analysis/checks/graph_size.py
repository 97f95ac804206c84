"""Evidence of the check ``big-graph``: the largest graph a compile captured, by torch's own count of its ops
(``graph_op_count`` of the compile's metrics: a TORCH_TRACE log's ``compilation_metrics``, our tracer's
compile end). A graph's size drives its compile time and memory; one far bigger than the rest is where a
long compile goes first. (The worked example of docs/ARCHITECTURE.md, "Add a check".)"""

from __future__ import annotations

from typing import Any

from msgspec import Struct

from magi_tui.model.analysis.checks.evidence import _int, event_attrs
from magi_tui.model.analysis.checks.gather import Gatherer, gatherer
from magi_tui.model.events import Event
from magi_tui.model.run import RunModel

#: compile ends whose attributes are read back, at most (each may be a line decoded again)
MAX_READS = 2000


class LargestGraph(Struct):
    compile_id: str | None
    ops: int
    event: Event
    #: compiles whose op count was read; ``more``: later compiles were not read (MAX_READS)
    compiles_read: int
    more: bool


@gatherer
class GraphSizes(Gatherer):
    def __init__(self) -> None:
        self.run: RunModel | None = None
        self.best: tuple[int, Event] | None = None
        self.read = 0
        self.more = False

    def bind(self, run: RunModel) -> None:
        self.run = run

    def closed(self, ev: Event) -> None:
        if ev.lifecycle != "compile" or self.run is None:
            return
        if self.read >= MAX_READS:
            self.more = True
            return
        self.read += 1
        attrs: dict[str, Any] = ev.attrs if ev.attrs is not None else event_attrs(self.run, ev)
        n = _int(attrs.get("graph_op_count"))
        if n is not None and (self.best is None or n > self.best[0]):
            self.best = (n, ev)

    def result(self) -> LargestGraph | None:
        if self.best is None:
            return None
        n, ev = self.best
        return LargestGraph(ev.compile_id, n, ev, self.read, self.more)
