"""``magi-tui run -- python script.py``: the program under a (fake) tracer, its log, its exit code,
stopping it. The fake tracer (tests/live/livekit.py) prints ``MAGI_RUN_DIR=`` like the real one."""

from __future__ import annotations

import signal
import sys
import textwrap

import pytest

from magi_tui.live.runner import ProgramRunner, clean_line, tracer_command
from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.command import CommandRunScreen
from magi_tui.ui.screens.runs import COLUMNS
from magi_tui.ui.screens.waiting import WaitingScreen
from magi_tui.ui.widgets.process_log import ProcessLog
from tests.live.livekit import pid_alive, write_fake_tracer
from tests.support.pilot import notes, tree_labels, wait_for

SIZE = (120, 36)


def on_command_screen(app) -> bool:
    return isinstance(app.screen, CommandRunScreen) and app.screen.query_one(ProcessLog).is_mounted

WRITER = textwrap.dedent('''
    import json, os, sys, time
    run = os.environ["MAGI_FAKE_RUN"]
    path = os.path.join(run, "timeline_events", "timeline.jsonl")
    def emit(i, name, **attrs):
        with open(path, "a") as fh:
            fh.write(json.dumps({"index": i, "name": name, "relative_time": "0.0ms", "files": [],
                                 "attributes": {"scope": "fullgraph", **attrs},
                                 "datetime": "2026-11-22 12:00:00.000", "timestamp": time.time()}) + "\\n")
    print("hello from the program [bold]not markup[/] \\x1b[31mred\\x1b[0m", flush=True)
    emit(0, "fullgraph_before_compile", lifecycle_name="compile")
    emit(1, "fullgraph_after_compile", lifecycle_name="compile", duration_ms=2.0)
    print("to stderr", file=sys.stderr, flush=True)
    if "--hang" in sys.argv:
        import signal
        if "--ignore-int" in sys.argv:
            signal.signal(signal.SIGINT, signal.SIG_IGN)
        print("HANGING", flush=True)
        time.sleep(60)
    sys.exit(int(sys.argv[1]) if len(sys.argv) > 1 and sys.argv[1].isdigit() else 0)
''')


@pytest.fixture
def fake_env(tmp_path, monkeypatch):
    write_fake_tracer(tmp_path / "pkgs")
    monkeypatch.setenv("MAGI_TUI_TRACER", "faketracer")
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "pkgs"))
    script = tmp_path / "prog.py"
    script.write_text(WRITER)
    return script


def test_tracer_command_rewrites_python_only():
    exe = sys.executable
    assert tracer_command(["python", "s.py", "-x"], "R", "tracer") == [exe, "-m", "tracer", "-o", "R", "s.py", "-x"]
    assert tracer_command(["python3", "-u", "s.py"], "R", "tracer") == [exe, "-u", "-m", "tracer", "-o", "R", "s.py"]
    assert tracer_command([exe, "s.py"], "R", "tracer")[:5] == [exe, "-m", "tracer", "-o", "R"]
    assert tracer_command(["python3.11", "s.py"], "R", "tracer")[1:3] == ["-m", "tracer"]
    assert tracer_command(["python", "-m", "pkg"], "R", "tracer") == ["python", "-m", "pkg"]
    assert tracer_command(["bash", "x.sh"], "R", "tracer") == ["bash", "x.sh"]


def test_clean_line_strips_ansi_and_shows_controls():
    assert clean_line("\x1b[31mred\x1b[0m [bold]x[/]") == "red [bold]x[/]"
    assert clean_line("a\x07b\x00c\x9b") == "a\\x07b\\x00c\\x9b"
    assert clean_line("\x1b]0;title\x07ok") == "ok"


async def test_run_shows_log_live_view_and_exit_code(tmp_path, fake_env):
    root = tmp_path / "runs"
    app = MagiApp(root, command=["python", str(fake_env), "3"])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: on_command_screen(app), timeout=15, what="run screen")
        screen = app.screen
        await wait_for(pilot, lambda: len(screen.run.events) == 2, what="the program's events")
        await wait_for(pilot, lambda: "compile" in tree_labels(screen), what="the compile in the tree")
        log = screen.query_one(ProcessLog)
        await wait_for(pilot, lambda: "to stderr" in log.text, what="program output")
        assert "hello from the program [bold]not markup[/] red" in log.text  # literal, ANSI stripped
        await wait_for(pilot, lambda: app.program.returncode == 3, what="exit")
        await wait_for(pilot, lambda: "exited with code 3" in str(screen.query_one("#run-title").content),
                       what="exit code in the title")
        await wait_for(pilot, lambda: any("exited with code 3" in n for n in notes(app)), what="notification")
        # nothing more will be written: the run is no longer LIVE and cannot be followed
        assert "LIVE" not in str(screen.query_one("#run-title").content)
        assert not screen.live and not screen.follow
        # the log panel toggles, and the run stays browsable
        assert log.display
        await pilot.press("l")
        assert not log.display
        await pilot.press("l")
        assert log.display
        await pilot.press("escape")
        await wait_for(pilot, lambda: isinstance(app.screen, WaitingScreen) and len(app.screen.rows) == 1,
                       what="runs list")
        table = app.screen.query_one("#runs-table")
        statuses = [str(table.get_row_at(i)[COLUMNS.index("status")]) for i in range(table.row_count)]
        assert statuses == ["ok"], statuses  # finished: its own status, not "live"


async def test_ctrl_c_stops_program_sigint_then_escalates(tmp_path, fake_env, monkeypatch):
    import magi_tui.live.runner as process

    monkeypatch.setattr(process, "SIGINT_GRACE_S", 0.3)
    root = tmp_path / "runs"
    app = MagiApp(root, command=["python", str(fake_env), "--hang", "--ignore-int"])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: on_command_screen(app), timeout=15, what="run screen")
        screen = app.screen
        log = screen.query_one(ProcessLog)
        await wait_for(pilot, lambda: "HANGING" in log.text, what="program running")
        pid = app.program.pid
        assert pid_alive(pid)
        await pilot.press("ctrl+c")
        # SIGINT is ignored by this program: SIGTERM follows after the grace period
        await wait_for(pilot, lambda: app.program.returncode is not None, timeout=6, what="stopped")
        assert app.program.returncode == -signal.SIGTERM
        assert "SIGINT" in log.text and "SIGTERM" in log.text
        assert not pid_alive(pid)
        await wait_for(pilot, lambda: "SIGTERM" in str(screen.query_one("#run-title").content), what="title")
        assert len(screen.run.events) == 2  # still browsable


async def test_quitting_the_app_stops_the_program(tmp_path, fake_env):
    root = tmp_path / "runs"
    app = MagiApp(root, command=["python", str(fake_env), "--hang"])
    async with app.run_test(size=SIZE) as pilot:
        await wait_for(pilot, lambda: on_command_screen(app), timeout=15, what="run screen")
        await wait_for(pilot, lambda: "HANGING" in app.screen.query_one(ProcessLog).text, what="running")
        pid = app.program.pid
        await pilot.press("ctrl+q")
    assert not pid_alive(pid)


async def test_program_that_fails_before_any_run(tmp_path, monkeypatch):
    monkeypatch.setenv("MAGI_TUI_TRACER", "no_such_tracer_module_xyz")
    root = tmp_path / "runs"
    app = MagiApp(root, command=["python", str(tmp_path / "missing.py")])
    async with app.run_test(size=SIZE, notifications=True) as pilot:
        await wait_for(pilot, lambda: app.program is not None and app.program.returncode is not None,
                       timeout=15, what="exit")
        screen = app.screen
        assert isinstance(screen, WaitingScreen)
        await wait_for(pilot, lambda: "before any run appeared" in str(screen.query_one("#waiting-text").content),
                       what="message")
        assert "no_such_tracer_module_xyz" in screen.query_one(ProcessLog).text


async def test_runner_reads_lines_without_newline_and_cr():
    r = ProgramRunner([sys.executable, "-c", "import sys; sys.stdout.write('a\\rb\\nc'); sys.stdout.flush()"])
    rc = await r.run()
    assert rc == 0
    assert [line.text for line in r.lines if line.stream == "stdout"] == ["a", "b", "c"]
