"""The event tree places every model item exactly once, however late an update is shown (issue #11:
the loader folds reads into the model at once but shows them to the tree in batches)."""

from __future__ import annotations

import sys
from collections import Counter
from pathlib import Path

from magi_tui.model import RunModel
from magi_tui.ui.widgets.event_tree import BUCKET, EventTree
from tests.support.pilot import TreeApp

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from synth import write_synthetic_run  # noqa: E402


def _placed(tree: EventTree) -> Counter:
    """How many nodes each model item has (first event seq -> count), over the whole node tree."""
    seen: Counter = Counter()
    stack = [tree.root]
    while stack:
        node = stack.pop()
        stack.extend(node.children)
        d = node.data
        if d is not None and d.kind in ("span", "event"):
            seen[d.obj.first.seq if d.kind == "span" else d.obj.seq] += 1
    return seen


def _all_loaded(tree: EventTree, buckets: bool = True) -> None:
    for gnode in list(tree._group_nodes.values()):
        tree.ensure_loaded(gnode)
        if buckets:
            for b in list(gnode.data.children.values()):
                tree.ensure_loaded(b)


async def test_late_updates_and_loads_on_expand_place_each_item_once(tmp_path):
    run_dir = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(run_dir, 6000)
    run = RunModel(run_dir)
    first = run.update(max_bytes=1 << 16)
    app = TreeApp(run)
    async with app.run_test() as pilot:
        tree = app.query_one(EventTree)
        tree.rebuild()
        await pilot.pause()
        for _ in range(3):
            tree.apply(run.update(max_bytes=1 << 17))  # shown: groups cut into (closed) buckets
            _all_loaded(tree, buckets=False)
            up = run.update(max_bytes=1 << 17)  # the model moves on; the tree is shown it later
            _all_loaded(tree)  # meanwhile the user opens the buckets
            await pilot.pause()
            tree.apply(up)
        assert first.events
        while True:  # and the rest, shown at once
            up = run.update()
            if not up.events:
                break
            tree.apply(up)
        _all_loaded(tree)
        await pilot.pause()
        counts = _placed(tree)
        items = {it.first.seq if hasattr(it, "first") else it.seq
                 for g in run.tree.groups() for it in g.items}
        assert max(counts.values()) == 1
        assert set(counts) == items
        big = max(run.tree.groups(), key=lambda g: len(g.items))
        assert len(big.items) > BUCKET  # the buckets were exercised


async def test_reveal_of_an_item_not_shown_yet(tmp_path):
    run_dir = tmp_path / "model_1_S_rank_0"
    write_synthetic_run(run_dir, 3000)
    run = RunModel(run_dir)
    run.update(max_bytes=1 << 15)
    app = TreeApp(run)
    async with app.run_test() as pilot:
        tree = app.query_one(EventTree)
        tree.rebuild()
        _all_loaded(tree)
        run.update()  # in the model, not yet shown
        last = run.events[-1]
        node = tree.reveal(last)
        await pilot.pause()
        assert node is not None and node.data.obj is last
        assert max(_placed(tree).values()) == 1
