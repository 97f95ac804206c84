"""``magi-tui attach``: real files written while the app tails them (run_test + Pilot, no torch)."""

from __future__ import annotations

import os
import shutil
import time

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.run import RunScreen
from magi_tui.ui.screens.waiting import WaitingScreen
from magi_tui.ui.widgets.detail import EventDetail
from magi_tui.ui.widgets.event_tree import EventTree
from tests.live.livekit import TimelineWriter, run_dir
from tests.support.pilot import notes, run_screen, tree_labels, wait_for

SIZE = (120, 36)


async def open_live(pilot, writer: TimelineWriter) -> RunScreen:
    await wait_for(pilot, lambda: run_screen(pilot.app) is not None and run_screen(pilot.app).loaded,
                   what="the live run screen")
    screen = run_screen(pilot.app)
    assert screen.live and screen.run.path == writer.run
    return screen


async def test_attach_empty_root_then_run_appears(tmp_path):
    root = tmp_path / "runs"
    root.mkdir()
    app = MagiApp(root, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: isinstance(app.screen, WaitingScreen), what="waiting screen")
        assert "waiting for a run under" in str(app.screen.query_one("#waiting-text").content)
        w = TimelineWriter(run_dir(root)).start()
        screen = await open_live(pilot, w)
        assert "LIVE" in str(screen.query_one("#run-title").content)
        w.lifecycle("compile")
        w.emit("fullgraph_after_inductor_schedule")
        await wait_for(pilot, lambda: len(screen.run.events) == 3, what="3 events")
        await wait_for(pilot, lambda: "inductor_schedule" in tree_labels(screen), what="tree node")
        # more, later: incremental
        for _ in range(5):
            w.lifecycle("removeitempass")
        await wait_for(pilot, lambda: len(screen.run.events) == 13, what="13 events")
        await wait_for(pilot, lambda: tree_labels(screen).count("removeitempass") == 5, what="5 pass nodes")
        assert [e.index for e in screen.run.events] == list(range(13))
        # Esc goes back to the runs list of the root, the run marked live
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, WaitingScreen), what="runs list")
        waiting = app.screen
        await wait_for(pilot, lambda: len(waiting.rows) == 1, what="one row")
        assert str(w.run) in waiting.live_paths


async def test_attach_follows_newest_and_announces_newer(tmp_path):
    root = tmp_path / "runs"
    old = TimelineWriter(run_dir(root, "20261122_100000")).start()
    old.lifecycle("compile")
    new = TimelineWriter(run_dir(root, "20261122_110000")).start()
    new.lifecycle("compile")
    app = MagiApp(root, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, new)  # the newest of those already there
        newer = TimelineWriter(run_dir(root, "20261122_120000")).start()
        newer.emit("fullgraph_before_compile", lifecycle_name="compile")
        await wait_for(pilot, lambda: any("newer run appeared" in n for n in notes(app)), what="announcement")
        assert run_screen(app) is screen  # announced, not switched
        await pilot.press("N")
        await wait_for(pilot, lambda: run_screen(app) is not None and run_screen(app).run.path == newer.run,
                       what="switched to the newer run")
        s2 = run_screen(app)
        await wait_for(pilot, lambda: s2.loaded and len(s2.run.events) == 1, what="newer run's event")
        # the open lifecycle shows as in progress with its elapsed time
        assert "OPEN" in tree_labels(s2).upper() or "…" in tree_labels(s2)


async def test_partial_line_then_completion_is_one_event(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await wait_for(pilot, lambda: len(screen.run.events) == 2, what="2 events")
        line = b'{"index": 2, "name": "fullgraph_after_inductor_schedule", "relative_time": "1.0ms", ' \
               b'"files": [], "attributes": {"scope": "fullgraph"}, "datetime": "2026-11-22 12:00:00.000", ' \
               b'"timestamp": ' + str(time.time()).encode() + b'}\n'
        w.raw(line[:40])
        await pilot.pause(0.5)  # the watcher and the poll both ran: still 2, and the run is incomplete
        assert len(screen.run.events) == 2
        assert screen.run.partial_line
        w.raw(line[40:])
        await wait_for(pilot, lambda: len(screen.run.events) == 3, what="the completed line")
        await pilot.pause(0.4)
        assert [e.index for e in screen.run.events] == [0, 1, 2]
        assert tree_labels(screen).count("inductor_schedule") == 1


async def test_folder_appears_after_line_detail_shows_files(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        files = {"before_compile_graph_module.py": "def forward(x):\n    return x\n"}
        idx = w.emit("fullgraph_before_compile", lifecycle_name="compile", files=files, write_files=False)
        await wait_for(pilot, lambda: len(screen.run.events) == 1, what="the event")
        screen.jump_to(screen.run.events[0])
        detail = screen.query_one(EventDetail)
        await wait_for(pilot, lambda: detail.current_event is screen.run.events[0], what="detail")
        assert detail.refs and detail.refs[0].path is None  # listed, folder not written yet
        w.write_files(idx, "fullgraph_before_compile", files)
        await wait_for(pilot, lambda: detail.refs and detail.refs[0].path is not None, what="files shown")


async def test_truncate_and_replace_reread_and_notify(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    for _ in range(3):
        w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await wait_for(pilot, lambda: len(screen.run.events) == 6, what="6 events")
        # truncate: a new writer starts the file again
        with open(w.path, "wb"):
            pass
        w.new_session()
        w.emit("fullgraph_before_dynamo_capture", lifecycle_name="dynamo_capture")
        await wait_for(pilot, lambda: len(screen.run.events) == 1, what="re-read after truncate")
        await wait_for(pilot, lambda: any("truncated" in n or "replaced" in n for n in notes(app)),
                       what="truncate notification")
        assert screen.run.events[0].name == "fullgraph_before_dynamo_capture"
        assert "dynamo_capture" in tree_labels(screen) and "compile" not in tree_labels(screen)
        # replace atomically (a new inode under the same name)
        n_before = len(notes(app))
        tmp = w.folder / "timeline.jsonl.tmp"
        w2 = TimelineWriter(w.run)
        w2.path = tmp
        w2.lifecycle("replaced_pass")
        w2.lifecycle("replaced_pass")
        os.replace(tmp, w.path)
        await wait_for(pilot, lambda: len(screen.run.events) == 4 and
                       screen.run.events[0].name == "fullgraph_before_replaced_pass", what="re-read after replace")
        await wait_for(pilot, lambda: len(notes(app)) > n_before and "replaced" in notes(app)[-1],
                       what="replace notification")


async def test_run_deleted_keeps_events_and_says_so(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile", fail="TorchRuntimeError")
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await wait_for(pilot, lambda: len(screen.run.events) == 4, what="4 events")
        shutil.rmtree(w.run)
        await wait_for(pilot, lambda: any("deleted" in n for n in notes(app)), what="deleted notification")
        await pilot.pause(0.7)  # several polls and watcher wake-ups later: nothing lost, no crash
        assert len(screen.run.events) == 4
        assert "DELETED" in str(screen.query_one("#run-title").content)
        assert tree_labels(screen).count("compile") >= 2
        await pilot.press("f")  # still browsable
        node = screen.query_one(EventTree).cursor_node
        assert node is not None and node.data.obj.name == "fullgraph_failed_compile"
        # written again at the same path: followed again from the start
        w2 = TimelineWriter(w.run).start()
        w2.emit("fullgraph_before_dynamo_capture", lifecycle_name="dynamo_capture")
        await wait_for(pilot, lambda: len(screen.run.events) == 1, what="re-created run followed")
        # the model is re-read inside the follower's poll; the title changes when the screen handles the
        # follower's Restored message, a moment later: wait for what the user sees, not for the model
        await wait_for(pilot, lambda: "DELETED" not in str(screen.query_one("#run-title").content),
                       what="DELETED cleared from the title")


async def test_index_restart_is_a_new_session(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await wait_for(pilot, lambda: len(screen.run.events) == 2, what="2 events")
        w.new_session()
        w.lifecycle("compile")
        await wait_for(pilot, lambda: len(screen.run.events) == 4, what="second session events")
        assert [e.session for e in screen.run.events] == [0, 0, 1, 1]
        await wait_for(pilot, lambda: "session 1" in tree_labels(screen), what="session node")


async def test_live_failure_is_announced_and_f_jumps_to_it(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await wait_for(pilot, lambda: len(screen.run.events) == 2, what="2 events")
        w.emit("fullgraph_before_inductor", lifecycle_name="inductor")
        w.emit("fullgraph_failed_inductor", lifecycle_name="inductor", exception_type="LoweringException",
               exception_message="[bold]no[/] lowering \x1b[31m")
        await wait_for(pilot, lambda: any("failure" in n and "LoweringException" in n for n in notes(app)),
                       what="failure notification")
        await pilot.press("F")  # follow off, so f is not undone by the next event
        await pilot.press("f")
        node = screen.query_one(EventTree).cursor_node
        assert node is not None and node.data.obj.name == "fullgraph_failed_inductor"
        assert screen.run.status == "failed"


async def test_follow_mode_selects_newest_and_toggles(tmp_path):
    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        assert screen.follow
        w.emit("fullgraph_after_inductor_schedule")
        await wait_for(pilot, lambda: len(screen.run.events) == 3, what="3 events")

        def selected_name():
            node = screen.query_one(EventTree).cursor_node
            obj = node.data.obj if node is not None and node.data is not None else None
            return getattr(obj, "name", None)

        await wait_for(pilot, lambda: selected_name() == "fullgraph_after_inductor_schedule", what="follow")
        await pilot.press("F")
        assert not screen.follow
        await pilot.press("up")
        before = selected_name()
        w.emit("fullgraph_recompile", reason="x")
        await wait_for(pilot, lambda: len(screen.run.events) == 4, what="4 events")
        await pilot.pause(0.1)
        assert selected_name() == before  # the selection is kept when not following


async def test_follow_folds_and_unloads_the_buckets_it_left_behind(tmp_path):
    """Tailing a long run in follow mode keeps tree nodes for the newest bucket only (memory and the
    Tree's redraw cost stay flat); a folded bucket, opened again, shows its events from the model."""
    from magi_tui.ui.widgets.event_tree import BUCKET

    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE) as pilot:
        screen = await open_live(pilot, w)
        assert screen.follow
        total = 2  # the compile's before/after
        for _batch in range(3):  # the tail grows past three buckets, a batch at a time
            for _ in range(BUCKET):
                w.emit("fullgraph_recompile", reason="x")
            total += BUCKET
            await wait_for(pilot, lambda: len(screen.run.events) == total, what=f"{total} events")
            await pilot.pause(0.2)
        tree = screen.query_one(EventTree)
        group = next(iter(tree._group_nodes.values()))
        buckets = group.data.children
        assert len(buckets) >= 3
        newest = max(buckets)
        stale = [b for start, b in buckets.items() if start != newest]
        assert all(not b.is_expanded and not b.data.loaded and not b.children for b in stale)
        assert len(tree._item_nodes) <= 2 * BUCKET   # the nodes of the stale buckets were given back
        first = buckets[0]
        await pilot.press("F")  # stop following, then open the oldest bucket again
        first.expand()
        await pilot.pause(0.1)
        assert first.data.loaded and len(first.children) == BUCKET
        assert "recompile" in str(first.children[-1].label)


async def test_attach_to_a_run_its_tracer_closed_is_not_live_and_q_quits(tmp_path):
    import json
    import socket

    from magi_format.layout import SESSION_FILE, session_record

    w = TimelineWriter(run_dir(tmp_path)).start()
    w.lifecycle("compile")
    record = w.run / "timeline_events" / SESSION_FILE
    record.write_text(json.dumps(session_record(os.getpid(), socket.gethostname(), time.time(), None)))
    app = MagiApp(w.run, live=True)
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        screen = await open_live(pilot, w)
        await pilot.pause(1.0)
        assert "LIVE" in str(screen.query_one("#run-title").content)  # its writer (this process) still runs
        record.write_text(json.dumps(session_record(os.getpid(), socket.gethostname(), time.time(), time.time())))
        await wait_for(pilot, lambda: "LIVE" not in str(screen.query_one("#run-title").content),
                       what="LIVE dropped once the tracer closed the run")
        assert not screen.live
        # the run attach opened by itself is the user's first screen: q quits (it opened the runs list)
        await pilot.press("q")
        await wait_for(pilot, lambda: app._exit, what="q to quit")
