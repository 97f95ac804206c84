"""The run as a tree: session -> compile id -> fullgraph / subgraph_<k> -> lifecycle spans and point events.

Only the grouping lives here; widgets decide what to show expanded. Groups keep their items in
timeline order (a span sits where its ``before`` was); ``Span.depth`` carries the nesting so a view can
indent. A session level appears only when a file holds more than one session; a compile-id level only
when events carry ``compile_id`` (our tracer, FORMAT.md part B).

A run may hold 100k compile ids, so what the tree keeps per compile is its node, its groups and one
entry in its session's index by compile id: a group is found through its compile node (a compile has a
few scopes), not through an index of its own.
"""

from __future__ import annotations

from typing import Iterator

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


class CompileNode(Struct, gc=False):
    """A compile id's node: its groups, a tuple in scope order (a compile has one group, most often: a tuple
    of one is the smallest container), made anew when a scope is added. Not tracked by the cycle collector
    (``gc=False``): nothing it holds points back to it (a group knows its compile by key), so reference
    counting frees it, and a run of 100k compile ids has 100k fewer objects for the collector to walk."""

    session: int
    compile_id: str | None
    frame: str | None = None
    groups: tuple[Group, ...] = ()
    failed: int = 0
    #: where it is in its session's ``compiles`` (a view cuts a long list into buckets by it)
    pos: int = 0

    def events_count(self) -> int:
        return sum(len(g.items) for g in self.groups)

    def group(self, scope: str) -> Group | None:
        """Its group of ``scope`` (a compile has a fullgraph and a few subgraphs: a short scan)."""
        for g in self.groups:
            if g.scope == scope:
                return g
        return None


class SessionNode(Struct):
    session: int
    compiles: list[CompileNode] = field(default_factory=list)
    #: its compiles by compile id (the index per session keeps no key tuple per compile)
    by_id: dict[str | None, CompileNode] = field(default_factory=dict)


class RunTree:
    """Grouping built incrementally as spans and point events arrive."""

    def __init__(self) -> None:
        self.sessions: list[SessionNode] = []
        #: the group the last item went to: a run's events come a group at a time
        self._last: Group | None = None
        self._has_compile_ids = False

    @property
    def has_compile_ids(self) -> bool:
        """Whether any event carried a compile id (kept as they come: asked once per new group)."""
        return self._has_compile_ids

    def compile_node(self, session: int, compile_id: str | None) -> CompileNode | None:
        """The compile node of ``(session, compile_id)`` (an index: a run may hold 100k compile ids)."""
        if 0 <= session < len(self.sessions):
            return self.sessions[session].by_id.get(compile_id)
        return None

    def groups(self) -> Iterator[Group]:
        """Every group, session by session, compile by compile."""
        for s in self.sessions:
            for c in s.compiles:
                yield from c.groups

    def add(self, item: TreeItem) -> tuple[Group, bool]:
        """File ``item`` under its group; returns ``(group, group_is_new)``."""
        if isinstance(item, Span):
            span: Span | None = item
            ev = item.first
        else:
            span, ev = None, item
        group = self._last
        if group is None or group.scope != ev.scope or group.compile_id != ev.compile_id \
                or group.session != ev.session:
            group = self.group_of(ev)
        if group is not None:  # the common case: a known group (its compile node exists)
            summary = ev.summary
            if summary is not None and summary.get("frame"):
                self._compile(ev)  # a recompile event comes before the frame is known
            group.items.append(item)
            if span is not None:
                span.group = group
            if ev.phase == "failed":
                self.mark_failed(group)
            self._last = group
            return group, False
        cnode = self._compile(ev)
        group = Group(ev.session, ev.compile_id, ev.scope)
        cnode.groups = tuple(sorted((*cnode.groups, group), key=lambda g: _scope_order(g.scope)))
        group.items.append(item)
        if span is not None:
            span.group = group
        if ev.phase == "failed":
            self.mark_failed(group)
        self._last = group
        return group, True

    def mark_failed(self, group: object) -> None:
        """Count a failure in ``group`` (a span's ``group``, which this tree set)."""
        assert isinstance(group, Group)
        group.failed += 1
        cnode = self.compile_node(group.session, group.compile_id)
        assert cnode is not None, "a group's compile node is made with it"
        cnode.failed += 1

    def _compile(self, ev: Event) -> CompileNode:
        cnode = self.compile_node(ev.session, ev.compile_id)
        if cnode is not None and cnode.frame is None and ev.summary and ev.summary.get("frame"):
            cnode.frame = ev.summary["frame"]  # a recompile event comes before the frame is known
        if cnode is None:
            while len(self.sessions) <= ev.session:
                self.sessions.append(SessionNode(len(self.sessions)))
            session = self.sessions[ev.session]
            cnode = CompileNode(ev.session, ev.compile_id, (ev.summary or {}).get("frame"),
                                pos=len(session.compiles))
            session.by_id[ev.compile_id] = cnode
            session.compiles.append(cnode)
            if ev.compile_id is not None:
                self._has_compile_ids = True
        return cnode

    def group_of(self, ev: Event) -> Group | None:
        cnode = self.compile_node(ev.session, ev.compile_id)
        return None if cnode is None else cnode.group(ev.scope)
