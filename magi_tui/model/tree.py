"""The run as a tree: session -> compile id -> fullgraph / subgraph_<k> -> lifecycle spans and point events.

Only the grouping lives here; widgets decide what to show expanded. Groups keep their items in
timeline order (a span sits where its ``before`` was); ``Span.depth`` carries the nesting so a view can
indent. A session level appears only when a file holds more than one session; a compile-id level only
when events carry ``compile_id`` (our tracer, FORMAT.md part B).
"""

from __future__ import annotations

from msgspec import Struct, field

from magi_tui.model.events import Event, Span

TreeItem = Span | Event


def _scope_order(scope: str) -> tuple[int, int]:
    if scope == "fullgraph":
        return (0, 0)
    try:
        return (1, int(scope.rsplit("_", 1)[1]))
    except ValueError:
        return (2, 0)


class Group(Struct):
    """A scope group inside one (session, compile id)."""

    session: int
    compile_id: str | None
    scope: str
    items: list[TreeItem] = field(default_factory=list)
    failed: int = 0

    @property
    def key(self) -> tuple:
        return (self.session, self.compile_id, self.scope)


class CompileNode(Struct):
    session: int
    compile_id: str | None
    frame: str | None = None
    groups: list[Group] = field(default_factory=list)
    failed: int = 0
    #: where it is in its session's ``compiles`` (a view cuts a long list into buckets by it)
    pos: int = 0

    def events_count(self) -> int:
        return sum(len(g.items) for g in self.groups)


class SessionNode(Struct):
    session: int
    compiles: list[CompileNode] = field(default_factory=list)


class RunTree:
    """Grouping built incrementally as spans and point events arrive."""

    def __init__(self) -> None:
        self.sessions: list[SessionNode] = []
        self._groups: dict[tuple, Group] = {}
        self._compiles: dict[tuple, CompileNode] = {}
        self._has_compile_ids = False

    @property
    def has_compile_ids(self) -> bool:
        """Whether any event carried a compile id (kept as they come: asked once per new group)."""
        return self._has_compile_ids

    def compile_node(self, session: int, compile_id: str | None) -> CompileNode | None:
        """The compile node of ``(session, compile_id)`` (an index: a run may hold 100k compile ids)."""
        return self._compiles.get((session, compile_id))

    def add(self, item: TreeItem) -> tuple[Group, bool]:
        """File ``item`` under its group; returns ``(group, group_is_new)``."""
        if isinstance(item, Span):
            span: Span | None = item
            ev = item.first
        else:
            span, ev = None, item
        key = (ev.session, ev.compile_id, ev.scope)
        group = self._groups.get(key)
        if group is not None:  # the common case: a known group (its compile node exists)
            summary = ev.summary
            if summary is not None and summary.get("frame"):
                self._compile(ev)  # a recompile event comes before the frame is known
            group.items.append(item)
            if span is not None:
                span.group = group
            if ev.phase == "failed":
                self.mark_failed(group)
            return group, False
        new = True
        cnode = self._compile(ev)
        if group is None:
            group = Group(ev.session, ev.compile_id, ev.scope)
            self._groups[key] = group
            cnode.groups.append(group)
            cnode.groups.sort(key=lambda g: _scope_order(g.scope))
        group.items.append(item)
        if isinstance(item, Span):
            item.group = group
        if ev.phase == "failed":
            self.mark_failed(group)
        return group, new

    def mark_failed(self, group: object) -> None:
        """Count a failure in ``group`` (a span's ``group``, which this tree set)."""
        assert isinstance(group, Group)
        group.failed += 1
        self._compiles[(group.session, group.compile_id)].failed += 1

    def _compile(self, ev: Event) -> CompileNode:
        ckey = (ev.session, ev.compile_id)
        cnode = self._compiles.get(ckey)
        if cnode is not None and cnode.frame is None and ev.summary and ev.summary.get("frame"):
            cnode.frame = ev.summary["frame"]  # a recompile event comes before the frame is known
        if cnode is None:
            while len(self.sessions) <= ev.session:
                self.sessions.append(SessionNode(len(self.sessions)))
            compiles = self.sessions[ev.session].compiles
            cnode = CompileNode(ev.session, ev.compile_id, (ev.summary or {}).get("frame"), pos=len(compiles))
            self._compiles[ckey] = cnode
            compiles.append(cnode)
            if ev.compile_id is not None:
                self._has_compile_ids = True
        return cnode

    def group_of(self, ev: Event) -> Group | None:
        return self._groups.get((ev.session, ev.compile_id, ev.scope))
