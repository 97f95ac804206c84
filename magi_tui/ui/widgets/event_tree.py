"""The event tree: session -> compile id -> fullgraph / subgraph_<k> -> lifecycle spans and point events.

Textual's ``Tree`` rebuilds its whole visible-line list on every change (TUI.md §3.1), so this tree is
lazy: groups start collapsed and get their children when first expanded, big groups are cut into
buckets of ``BUCKET`` items, and a live update only adds nodes under groups that are already loaded.
Labels are ``Text`` built in :mod:`magi_tui.ui.labels` (never markup).
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from rich.text import Text
from textual.widgets import Tree
from textual.widgets.tree import TreeNode

from magi_format.text import literal
from magi_tui.model.events import Event, Span
from magi_tui.model.run import RunModel, RunUpdate
from magi_tui.model.tree import CompileNode, Group
from magi_tui.model.triage import Failure
from magi_tui.ui.actions import bindings, vim_bindings
from magi_tui.ui.labels import event_label, now, span_label

BUCKET = 400


@dataclass
class NodeData:
    kind: str  # session | cbucket | compile | group | bucket | span | event | phase
    obj: Any = None
    start: int = 0   # bucket: first item index in the group
    loaded: bool = False
    placed: int = 0  # group: how many of its items have nodes (or buckets) already
    #: group: its buckets by first item index; span: its phase leaves by event seq
    children: dict[int, TreeNode[NodeData]] = field(default_factory=dict)


def _data(node: TreeNode[NodeData]) -> NodeData:
    """The data of a node below the root: every node this tree adds carries one (Textual types a node's
    data as optional)."""
    data = node.data
    assert data is not None, "every node of the event tree carries its NodeData"
    return data


def _group(span: Span) -> Group | None:
    """The tree group showing ``span`` (the record types it loosely, knowing nothing of the tree)."""
    group = span.group
    return group if isinstance(group, Group) else None


class EventTree(Tree[NodeData]):
    """Lazy tree over a :class:`RunModel`."""

    BINDINGS = [
        *vim_bindings(down="cursor_down", up="cursor_up", top="scroll_home", bottom="scroll_end"),
        *bindings("tree"),
    ]

    def __init__(self, run: RunModel, **kwargs: Any) -> None:
        super().__init__(Text("run"), **kwargs)
        self.run = run
        self.show_root = False
        self.guide_depth = 2
        self.auto_expand = False
        self._group_nodes: dict[tuple, TreeNode[NodeData]] = {}
        self._compile_nodes: dict[tuple, TreeNode[NodeData]] = {}
        self._session_nodes: dict[int, TreeNode[NodeData]] = {}
        self._item_nodes: dict[int, TreeNode[NodeData]] = {}  # first event seq -> node
        self._cbuckets: dict[tuple[int, int], TreeNode[NodeData]] = {}  # (session, first pos) -> node
        self._bucketed: set[int] = set()  # sessions whose compiles are in buckets
        self._recovered: set[int] = set()
        #: failed compiles of frames Dynamo skipped (they ran eagerly), and how many per group / compile:
        #: marked "ran eagerly", not counted as failed (the triage's word for them)
        self._eager: set[int] = set()
        self._eager_in: Counter[tuple] = Counter()

    # -- Tree hooks ----------------------------------------------------------------------------
    def process_label(self, label: Any) -> Text:
        return label if isinstance(label, Text) else Text(literal(label))

    def get_label_width(self, node: TreeNode[NodeData]) -> int:
        return node._label.cell_len + 2

    # -- building ------------------------------------------------------------------------------
    def rebuild(self) -> None:
        """(Re)create the top levels from the model; groups stay collapsed. A session with more than
        ``BUCKET`` compiles gets compile buckets instead (a service recompiling for shapes, or a fuzz
        harness, logs 100k compile ids): their compile and group nodes are made when one is opened."""
        self.clear()
        self._group_nodes.clear()
        self._compile_nodes.clear()
        self._session_nodes.clear()
        self._item_nodes.clear()
        self._cbuckets.clear()
        self._bucketed.clear()
        self._refresh_recovered()
        tree = self.run.tree
        for s in tree.sessions:
            if tree.has_compile_ids and len(s.compiles) > BUCKET:
                self._bucketed.add(s.session)
                for start in range(0, len(s.compiles), BUCKET):
                    self._add_cbucket(s.session, start)
                continue
            for c in s.compiles:
                for g in c.groups:
                    self._ensure_group_node(g)
        self._auto_open()

    def _auto_open(self) -> None:
        """Open small runs fully and big ones at their first group, so the screen is not a wall of
        collapsed nodes (and a 100k-event run does not build 100k nodes)."""
        first_bucket = next(iter(self._cbuckets.values()), None)
        if first_bucket is not None:
            self._expand_path(first_bucket)
            self.ensure_loaded(first_bucket)
        nodes = list(self._group_nodes.values())
        total = sum(len(_data(n).obj.items) for n in nodes)
        for i, node in enumerate(nodes):
            if total <= 300 or i == 0:
                self._expand_path(node)

    def _expand_path(self, node: TreeNode[NodeData]) -> None:
        """Expand ``node`` and every node above it."""
        parent = node.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        node.expand()

    def _needs_regroup(self) -> bool:
        """A session grew past ``BUCKET`` compiles since the tree was built: its compiles go into
        buckets (once per session; the tree is rebuilt then, so what was open closes)."""
        tree = self.run.tree
        return tree.has_compile_ids and any(
            len(s.compiles) > BUCKET and s.session not in self._bucketed for s in tree.sessions)

    def _multi_session(self) -> bool:
        return len(self.run.tree.sessions) > 1

    def _parent_for_compile(self, session: int) -> TreeNode[NodeData]:
        if not self._multi_session():
            return self.root
        node = self._session_nodes.get(session)
        if node is None:
            node = self.root.add(Text(f"session {session}", style="bold"), NodeData("session", session),
                                 expand=True)
            self._session_nodes[session] = node
        return node

    def _compile_label(self, c: CompileNode) -> Text:
        if c.compile_id is None:
            t = Text("outside any compile", style="bold", end="")
        else:
            t = Text("compile ", style="bold", end="")
            t.append(literal(c.compile_id), style="bold cyan")
        if c.frame:
            t.append("  " + literal(c.frame, 60))
        t.append(f"  {c.events_count()} items", style="dim")
        _failed_counts(t, c.failed, self._eager_in[("c", c.session, c.compile_id)])
        return t

    # compile buckets: BUCKET compiles of one session each
    def _cbucket_label(self, session: int, start: int) -> Text:
        comps = self.run.tree.sessions[session].compiles[start:start + BUCKET]
        t = Text("compile ", style="bold", end="")
        t.append(literal(comps[0].compile_id), style="cyan")
        t.append(" … ")
        t.append(literal(comps[-1].compile_id), style="cyan")
        t.append(f"  ({len(comps)} compiles)", style="dim")
        failed = sum(1 for c in comps if c.failed)
        if failed:
            t.append(f"  ✗ {failed} with failures", style="red")
        return t

    def _add_cbucket(self, session: int, start: int) -> TreeNode[NodeData]:
        node = self._parent_for_compile(session).add(self._cbucket_label(session, start),
                                                     NodeData("cbucket", session, start=start))
        self._cbuckets[(session, start)] = node
        return node

    def _load_cbucket(self, node: TreeNode[NodeData]) -> None:
        data = _data(node)
        data.loaded = True
        for comp in self.run.tree.sessions[data.obj].compiles[data.start:data.start + BUCKET]:
            for g in comp.groups:
                self._ensure_group_node(g)

    def _unload_cbucket(self, node: TreeNode[NodeData]) -> None:
        """Give back a compile bucket's nodes (rebuilt from the model when it is opened again)."""
        data = _data(node)
        for comp in self.run.tree.sessions[data.obj].compiles[data.start:data.start + BUCKET]:
            self._compile_nodes.pop((comp.session, comp.compile_id), None)
            for g in comp.groups:
                gnode = self._group_nodes.pop(g.key, None)
                if gnode is not None and _data(gnode).loaded:
                    for item in g.items:
                        self._item_nodes.pop(item.first.seq if isinstance(item, Span) else item.seq, None)
        node.remove_children()
        data.loaded = False

    def _compile_parent(self, comp: CompileNode, *, force: bool) -> TreeNode[NodeData] | None:
        """The node ``comp``'s node goes under: its session (or the root), or its compile bucket; None
        when that bucket is not loaded (``force`` loads it)."""
        if comp.session not in self._bucketed:
            return self._parent_for_compile(comp.session)
        start = comp.pos // BUCKET * BUCKET
        bnode = self._cbuckets.get((comp.session, start))
        if bnode is None:
            bnode = self._add_cbucket(comp.session, start)
        if not _data(bnode).loaded:
            if not force:
                return None
            self._load_cbucket(bnode)
        return bnode

    def _ensure_group_node(self, g: Group, *, force: bool = False) -> TreeNode[NodeData] | None:
        """The group's node, made (with its compile's) if needed; None when it sits in a compile bucket
        that is not loaded (``force``: load it)."""
        node = self._group_nodes.get(g.key)
        if node is not None:
            return node
        tree = self.run.tree
        if tree.has_compile_ids:
            ckey = (g.session, g.compile_id)
            cnode = self._compile_nodes.get(ckey)
            if cnode is None:
                comp = tree.compile_node(g.session, g.compile_id)
                if comp is None:
                    return None
                parent = self._compile_parent(comp, force=force)
                if parent is None:
                    return None
                node = self._group_nodes.get(g.key)  # loading the bucket made it
                if node is not None:
                    return node
                cnode = self._compile_nodes.get(ckey)
                if cnode is None:
                    cnode = parent.add(self._compile_label(comp), NodeData("compile", comp))
                    self._compile_nodes[ckey] = cnode
            parent = cnode
        else:
            parent = self._parent_for_compile(g.session)
        node = parent.add(self._group_label(g), NodeData("group", g))
        self._group_nodes[g.key] = node
        return node

    def _group_label(self, g: Group) -> Text:
        t = Text(literal(g.scope), style="bold", end="")
        t.append(f"  {len(g.items)} items", style="dim")
        _failed_counts(t, g.failed, self._eager_in[("g", *g.key)])
        return t

    def _item_label(self, item: Span | Event) -> Text:
        if isinstance(item, Span):
            end = item.end
            return span_label(item, recovered=end is not None and end.seq in self._recovered,
                              eager=end is not None and end.seq in self._eager,
                              now=now() if end is None else None)
        return event_label(item, recovered=item.seq in self._recovered, eager=item.seq in self._eager,
                           indent=True)

    def _add_item(self, parent: TreeNode[NodeData], item: Span | Event) -> TreeNode[NodeData]:
        if isinstance(item, Span):
            node = parent.add(self._item_label(item), NodeData("span", item))
        else:
            node = parent.add_leaf(self._item_label(item), NodeData("event", item))
        self._item_nodes[item.first.seq if isinstance(item, Span) else item.seq] = node
        return node

    def _load_group(self, node: TreeNode[NodeData]) -> None:
        data = _data(node)
        g: Group = data.obj
        data.loaded = True
        data.placed = len(g.items)
        if len(g.items) > BUCKET:
            for start in range(0, len(g.items), BUCKET):
                self._add_bucket(node, g, start)
        else:
            for item in g.items:
                self._add_item(node, item)

    def _bucket_label(self, g: Group, start: int) -> Text:
        items = g.items[start:start + BUCKET]
        first = items[0].first if isinstance(items[0], Span) else items[0]
        last = items[-1].first if isinstance(items[-1], Span) else items[-1]
        return Text(f"#{first.index}…#{last.index}  ({len(items)} items)", style="dim")

    def _add_bucket(self, node: TreeNode[NodeData], g: Group, start: int) -> TreeNode[NodeData]:
        b = node.add(self._bucket_label(g, start), NodeData("bucket", g, start=start))
        _data(node).children[start] = b
        return b

    def _load_bucket(self, node: TreeNode[NodeData]) -> None:
        data = _data(node)
        data.loaded = True
        g: Group = data.obj
        placed = node.parent.data.placed if node.parent is not None and node.parent.data is not None else len(g.items)
        # only what the group has placed: later items come through _catch_up, once
        for item in g.items[data.start:min(data.start + BUCKET, placed)]:
            self._add_item(node, item)

    def _load_span(self, node: TreeNode[NodeData]) -> None:
        data = _data(node)
        span: Span = data.obj
        data.loaded = True
        for ev in span.events:
            leaf = node.add_leaf(event_label(ev, recovered=ev.seq in self._recovered, eager=ev.seq in self._eager),
                                 NodeData("phase", ev))
            data.children[ev.seq] = leaf

    def ensure_loaded(self, node: TreeNode[NodeData]) -> None:
        data = node.data
        if data is None or data.loaded:
            return
        if data.kind == "group":
            self._load_group(node)
        elif data.kind == "cbucket":
            self._load_cbucket(node)
        elif data.kind == "bucket":
            self._load_bucket(node)
        elif data.kind == "span":
            self._load_span(node)

    def _on_tree_node_expanded(self, event: Tree.NodeExpanded[NodeData]) -> None:
        self.ensure_loaded(event.node)

    # -- live updates --------------------------------------------------------------------------
    def _refresh_recovered(self) -> None:
        failures = self.run.triage.failures
        self._recovered = {f.event.seq for f in failures if f.recovered}
        self._eager.clear()
        self._eager_in.clear()
        for f in failures:
            self._note_eager(f)

    def _note_eager(self, f: Failure) -> None:
        """Count a failure of a frame Dynamo skipped (its cascade is a fallback) under its group and compile."""
        if f.cascade is None or not f.cascade.fallback or f.event.seq in self._eager:
            return
        self._eager.add(f.event.seq)
        span = f.event.span
        group = _group(span) if span is not None else None
        if group is None:
            group = self.run.tree.group_of(f.event)
        if group is not None:
            self._eager_in[("g", *group.key)] += 1
            self._eager_in[("c", group.session, group.compile_id)] += 1

    def apply(self, update: RunUpdate) -> None:
        """Add what ``update`` brought, keeping selection, expansion and scroll.

        The model's groups are the truth: a loaded group is brought up to ``len(group.items)`` (what was
        placed is counted in ``placed``), so an update shown late, or a group loaded on expand before
        its update arrived, never places an item twice. Only the labels of what changed are redone."""
        if update.reset or self._needs_regroup():
            self.rebuild()
            return
        for f in update.recovered:
            self._recovered.add(f.event.seq)
        for f in update.failures:
            self._note_eager(f)
        touched: dict[tuple, Group] = {}
        cbuckets: set[tuple[int, int]] = set()
        tree = self.run.tree
        for group in update.groups.values():
            if group.key not in touched:
                touched[group.key] = group
                self._ensure_group_node(group)
                if group.session in self._bucketed:
                    comp = tree.compile_node(group.session, group.compile_id)
                    if comp is not None:
                        cbuckets.add((group.session, comp.pos // BUCKET * BUCKET))
        item_nodes = self._item_nodes  # a few hundred nodes; a load's update closes tens of thousands of spans
        for span in update.closed:
            if span.first.seq in item_nodes:
                self._relabel_span(span)
            end = span.end
            shown_in = _group(span)
            if end is not None and end.phase == "failed" and shown_in is not None:
                touched.setdefault(shown_in.key, shown_in)
        for f in update.recovered:
            recovered = self.run.span_of(f.event)
            if recovered is not None:
                self._relabel_span(recovered)
        compiles: set[tuple] = set()
        for key, group in touched.items():
            node = self._group_nodes.get(key)
            if node is None:  # in a compile bucket not opened: its label says enough
                if group.session in self._bucketed:
                    comp = tree.compile_node(group.session, group.compile_id)
                    if comp is not None:
                        cbuckets.add((group.session, comp.pos // BUCKET * BUCKET))
                continue
            self._catch_up(node)
            node.set_label(self._group_label(group))
            compiles.add((group.session, group.compile_id))
        for ckey in compiles:
            cnode = self._compile_nodes.get(ckey)
            if cnode is not None:
                cnode.set_label(self._compile_label(_data(cnode).obj))
        for session, start in cbuckets:
            bnode = self._cbuckets.get((session, start))
            if bnode is not None:
                bnode.set_label(self._cbucket_label(session, start))
        if len(self._group_nodes) == 1:
            for node in self._group_nodes.values():
                if not node.is_expanded and not _data(node).loaded:
                    node.expand()

    def _catch_up(self, gnode: TreeNode[NodeData]) -> None:
        """Give a loaded group nodes for the items the model added since it was placed."""
        data = gnode.data
        if data is None or not data.loaded:
            return  # not shown yet: loads on expand
        group: Group = data.obj
        items = group.items
        n = len(items)
        if data.placed >= n:
            return
        if not data.children and n > BUCKET:  # grew past one bucket: regroup
            gnode.remove_children()
            self._load_group(gnode)
            return
        if not data.children:
            for item in items[data.placed:n]:
                self._add_item(gnode, item)
            data.placed = n
            return
        touched_buckets: dict[int, TreeNode[NodeData]] = {}
        for pos in range(data.placed, n):
            start = (pos // BUCKET) * BUCKET
            bnode = data.children.get(start)
            if bnode is None:
                bnode = self._add_bucket(gnode, group, start)
            else:
                touched_buckets[start] = bnode
            if _data(bnode).loaded:
                self._add_item(bnode, items[pos])
        data.placed = n
        for start, bnode in touched_buckets.items():
            bnode.set_label(self._bucket_label(group, start))

    def _relabel_span(self, span: Span) -> None:
        node = self._item_nodes.get(span.first.seq)
        if node is None:
            return
        node.set_label(self._item_label(span))
        data = _data(node)
        if data.loaded and span.end is not None and span.end.seq not in data.children:
            leaf = node.add_leaf(event_label(span.end, recovered=span.end.seq in self._recovered,
                                             eager=span.end.seq in self._eager),
                                 NodeData("phase", span.end))
            data.children[span.end.seq] = leaf

    def tick_open(self) -> None:
        """Refresh the elapsed time on open spans that are on screen."""
        for span in self.run.open_spans:
            node = self._item_nodes.get(span.first.seq)
            if node is not None and node.line >= 0:
                node.set_label(self._item_label(span))

    # -- navigation ----------------------------------------------------------------------------
    def reveal(self, ev: Event, *, phase: bool = True) -> TreeNode[NodeData] | None:
        """Expand the path to ``ev``, move the cursor onto it (its phase leaf when it is part of a
        span and ``phase``), and return the node."""
        span = self.run.span_of(ev)
        item: Span | Event = span if span is not None else ev
        group = _group(span) if span is not None else self.run.tree.group_of(ev)
        if group is None:
            return None
        gnode = self._ensure_group_node(group, force=True)
        if gnode is None:
            return None
        parent = gnode.parent
        while parent is not None and parent is not self.root:
            parent.expand()
            parent = parent.parent
        self.ensure_loaded(gnode)
        self._catch_up(gnode)  # the item may be newer than what the tree has shown so far
        gnode.expand()
        container = gnode
        if _data(gnode).children:
            items = group.items  # by identity from the end: O(1) for the newest (follow mode); list.index
            pos = next(i for i in range(len(items) - 1, -1, -1) if items[i] is item)  # used Span.__eq__
            start = (pos // BUCKET) * BUCKET
            container = _data(gnode).children.get(start) or self._add_bucket(gnode, group, start)
            self.ensure_loaded(container)
            container.expand()
        seq = item.first.seq if isinstance(item, Span) else item.seq
        node = self._item_nodes.get(seq)
        if node is None:
            return None
        if isinstance(item, Span) and phase:
            self.ensure_loaded(node)
            node.expand()
            node = _data(node).children.get(ev.seq, node)
        self._tree_lines  # rebuild now so the node has its line
        self.move_cursor(node)
        self.scroll_to_node(node, animate=False)
        return node

    def selected(self) -> tuple[str, Any] | None:
        node = self.cursor_node
        if node is None or node.data is None:
            return None
        return node.data.kind, node.data.obj

    def action_expand_node(self) -> None:
        node = self.cursor_node
        if node is not None and node.allow_expand and not node.is_expanded:
            node.expand()

    def action_collapse_node(self) -> None:
        node = self.cursor_node
        if node is None:
            return
        if node.is_expanded:
            node.collapse()
        elif node.parent is not None and node.parent is not self.root:
            self.move_cursor(node.parent)

    def fold_stale_buckets(self) -> None:
        """Follow mode opens the newest bucket of a big group; fold the ones it left behind (except the
        cursor's), or the visible lines — which the Tree re-renders on every change — grow with the run.
        A folded bucket also gives its nodes back (they are rebuilt from the model when it is opened
        again), so tailing a long run costs memory per event in the model only, not per tree node."""
        keep = set()
        node = self.cursor_node
        while node is not None:
            keep.add(id(node))
            node = node.parent
        for gnode in self._group_nodes.values():
            buckets = gnode.data.children if gnode.data is not None else None
            if not buckets or len(buckets) < 2:
                continue
            last = max(buckets)
            for start, bnode in buckets.items():
                if start == last or id(bnode) in keep:
                    continue
                if bnode.is_expanded:
                    bnode.collapse()
                if _data(bnode).loaded:
                    self._unload_bucket(bnode)
        lasts: dict[int, int] = {}
        for session, start in self._cbuckets:
            lasts[session] = max(start, lasts.get(session, start))
        for (session, start), bnode in self._cbuckets.items():
            if start == lasts[session] or id(bnode) in keep or not _data(bnode).loaded:
                continue
            if bnode.is_expanded:
                bnode.collapse()
            self._unload_cbucket(bnode)

    def _unload_bucket(self, bnode: TreeNode[NodeData]) -> None:
        data = _data(bnode)
        g: Group = data.obj
        for item in g.items[data.start:data.start + BUCKET]:
            self._item_nodes.pop(item.first.seq if isinstance(item, Span) else item.seq, None)
        bnode.remove_children()
        data.loaded = False


def _failed_counts(t: Text, failed: int, eager: int) -> None:
    """A compile's or group's failures, those of frames that ran eagerly apart (not failures)."""
    if failed - eager > 0:
        t.append(f"  ✗ {failed - eager} failed", style="red")
    if eager:
        t.append(f"  ↷ {eager} ran eagerly", style="yellow")

