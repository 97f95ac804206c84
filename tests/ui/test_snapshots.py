"""SVG snapshots of every screen at 80x24 and 120x40 (update with --snapshot-update), on real data.

The SVGs must be the same wherever the repository is checked out and however loaded the machine is: a
screen that shows the path it was given is given a relative one (after a ``chdir``); times are UTC
(tests/conftest.py); of the screens made from processes run here, the bisect's trial seconds are read from
a clock that stands still and the program's output is one stream. A screen is shot once what a user waits
for is on it (the load, what its worker fills in).
"""

from __future__ import annotations

import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens import lazy
from magi_tui.ui.screens.diff import DiffScreen
from magi_tui.ui.screens.run import RunScreen
from tests.support.paths import COLD, FIXTURES, ROOT, TORCH_TRACE, WARM
from tests.support.pilot import screen_text, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")

SIZES = [(80, 24), (120, 40)]
sizes = pytest.mark.parametrize("size", SIZES, ids=lambda s: f"{s[0]}x{s[1]}")

LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"
JOBS = ROOT / "tests" / "torchtrace" / "jobs"  # per-rank TORCH_TRACE logs of a real 2-rank job
FIX = Path(__file__).resolve().parent / "data" / "fix"  # a real `magi-tui fix` result (see its README)
SEEDED = ROOT / "tests" / "cache" / "fixtures" / "seeded_runs.tar.xz"  # issue 34's seeded runs (README there)


async def _loaded(pilot) -> RunScreen:
    await wait_for(pilot, lambda: isinstance(pilot.app.screen, RunScreen) and pilot.app.screen.loaded,
                   what="the run screen to load")
    await pilot.pause()
    return pilot.app.screen


async def _on(pilot, name: str, ready: str | None = "loaded"):
    """Wait for the screen class ``name`` on top, and (when it has one) its ``ready`` flag."""
    await wait_for(pilot, lambda: type(pilot.app.screen).__name__ == name
                   and (ready is None or getattr(pilot.app.screen, ready)), what=f"the {name}")
    await pilot.pause()
    return pilot.app.screen


async def _shows(pilot, *texts: str) -> None:
    """Wait until every one of ``texts`` is on screen (what a worker fills in: triage, a file, a detail)."""
    await wait_for(pilot, lambda: all(t in screen_text(pilot.app) for t in texts), what=f"{texts} on screen")
    await pilot.pause()


def _keys(*keys: str, screen: str | None = None, ready: str | None = "loaded", shows: tuple[str, ...] = ()):
    """``run_before``: the run loaded, then ``keys``, then (optionally) the screen ``screen`` ready and
    ``shows`` on screen."""
    async def run_before(pilot):
        await _loaded(pilot)
        for key in keys:
            await pilot.press(key)
            await pilot.pause()
        if screen is not None:
            await _on(pilot, screen, ready)
        await _shows(pilot, *shows)
    return run_before


# -- the run screen (tree, detail, triage, timeline) ---------------------------------------------------------

@sizes
def test_run_screen_with_triage(snap_compare, size):
    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=_keys(shows=("Status RECOVERED",)))


@sizes
def test_run_screen_first_failure_detail(snap_compare, size):
    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=_keys("f", shows=("exception_type", "1 from __future__")))


@sizes
def test_timeline(snap_compare, size):
    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=_keys("t", shows=("#0000      +0µs", "Status RECOVERED")))


@sizes
def test_run_screen_of_a_torch_trace_log(snap_compare, size, monkeypatch):
    monkeypatch.chdir(LOG.parent)  # the triage's "look first" names the log as it was given
    assert snap_compare(MagiApp(Path(LOG.name)), terminal_size=size, run_before=_keys(shows=("Status FAILED",)))


# -- screens pushed from the run screen ------------------------------------------------------------------------

@sizes
def test_diff_screen_graph_split(snap_compare, size):
    async def run_before(pilot):
        screen = await _loaded(pilot)
        screen.jump_to(next(e for e in screen.run.events if e.name == "fullgraph_after_graph_split"))
        await pilot.pause()
        await pilot.press("d")
        await wait_for(pilot, lambda: isinstance(pilot.app.screen, DiffScreen) and pilot.app.screen.diff is not None,
                       what="the diff")
        await pilot.press("right_square_bracket")
        await pilot.pause()

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@sizes
def test_compiled_functions(snap_compare, size):
    async def run_before(pilot):
        await _keys("c")(pilot)
        screen = await _on(pilot, "CompiledFunctionsScreen", None)
        await wait_for(pilot, lambda: screen.current is not None, what="the overview on view")
        await _shows(pilot, "Cache entries: 1")

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@sizes
def test_compile_info(snap_compare, size):
    async def run_before(pilot):
        await _keys("i")(pilot)
        screen = await _on(pilot, "CompileInfoScreen", None)
        await wait_for(pilot, lambda: screen.infos, what="the compile ids")
        await _shows(pilot, "compile phases")

    assert snap_compare(MagiApp(LOG), terminal_size=size, run_before=run_before)


@sizes
def test_frames(snap_compare, size):
    async def run_before(pilot):
        await _keys("w")(pilot)
        screen = await _on(pilot, "FramesScreen", None)
        await wait_for(pilot, lambda: screen.rows, what="the frames")
        await _shows(pilot, "44.4ms")  # the last row

    assert snap_compare(MagiApp(LOG), terminal_size=size, run_before=run_before)


@sizes
def test_help(snap_compare, size):
    assert snap_compare(MagiApp(COLD), terminal_size=size,
                        run_before=_keys("question_mark", screen="HelpScreen", ready=None, shows=("Keys  (esc closes)",)))


@sizes
def test_command_palette(snap_compare, size):
    async def run_before(pilot):
        await _keys("ctrl+p")(pilot)
        await _shows(pilot, "failure: #0013", "restart: #0013")  # what to look at first: discovery hits

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


# -- screens of a root: runs, compare, ranks, fix, bisect, waiting -------------------------------------------

@sizes
def test_runs_list(snap_compare, size, monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    assert snap_compare(MagiApp(Path(FIXTURES.name)), terminal_size=size,
                        run_before=lambda pilot: _on(pilot, "RunsScreen", "rows"))  # filled at once


@sizes
def test_compare_cold_and_warm_run(snap_compare, size, monkeypatch):
    monkeypatch.chdir(FIXTURES.parent)
    root = Path(FIXTURES.name, "transformer")

    async def run_before(pilot):
        await _on(pilot, "RunsScreen", "rows")
        pilot.app.push_screen(lazy("CompareScreen")(COLD.relative_to(FIXTURES.parent),
                                                    WARM.relative_to(FIXTURES.parent)))
        await _on(pilot, "CompareScreen")

    assert snap_compare(MagiApp(root), terminal_size=size, run_before=run_before)


@sizes
def test_cache_lookups_of_a_config_change(snap_compare, size, tmp_path, monkeypatch):
    """Enter on the triage panel's cache-miss line: the run's missed lookup beside the baseline's (issue 34)."""
    import tarfile

    from textual.widgets import OptionList

    with tarfile.open(SEEDED) as tf:
        tf.extractall(tmp_path, filter="data")
    monkeypatch.chdir(tmp_path)
    run = sorted(Path("runs", "magi_depyf").glob("run_*/model_1_seeded_rank_0"))[2]   # max_fusion_size 64 -> 32

    async def run_before(pilot):
        await _loaded(pilot)
        await pilot.press("T")
        triage = pilot.app.screen.query_one("#triage-list", OptionList)
        await wait_for(pilot, lambda: triage.option_count > 0, what="the triage list")
        triage.focus()
        triage.highlighted = next(i for i in range(triage.option_count)
                                  if (triage.get_option_at_index(i).id or "").startswith("cache_why:"))
        await pilot.press("enter")
        await _on(pilot, "CacheLookupsScreen", None)

    assert snap_compare(MagiApp(run), terminal_size=size, run_before=run_before)


@sizes
def test_ranks_of_a_two_rank_job(snap_compare, size, monkeypatch):
    monkeypatch.chdir(JOBS)

    async def run_before(pilot):
        await _on(pilot, "RunsScreen", "rows")
        await pilot.press("R")
        await _on(pilot, "RanksScreen")

    assert snap_compare(MagiApp(Path("branch2")), terminal_size=size, run_before=run_before)


@sizes
def test_fix_result(snap_compare, size, monkeypatch):
    monkeypatch.chdir(FIX.parent)

    async def run_before(pilot):
        await _on(pilot, "RunsScreen", None)
        await pilot.press("F")
        await _on(pilot, "FixScreen")

    assert snap_compare(MagiApp(Path(FIX.name)), terminal_size=size, run_before=run_before)


@sizes
def test_bisect_of_a_program_that_fails_without_compile(snap_compare, size, tmp_path, monkeypatch):
    from magi_tui.live import trial
    from magi_tui.live.bisect import Bisector

    (tmp_path / "bisect").mkdir()
    with monkeypatch.context() as m:  # the trials' seconds read 0.0 however loaded the machine is
        m.setattr(trial, "time", SimpleNamespace(monotonic=lambda: 0.0, strftime=time.strftime))
        Bisector(["sh", "-c", "echo 'ValueError: boom' >&2; exit 3"], tmp_path / "bisect").run()
    monkeypatch.chdir(tmp_path)
    assert snap_compare(MagiApp(Path("bisect")), terminal_size=size,
                        run_before=lambda pilot: _on(pilot, "BisectScreen", "result"))


@sizes
def test_waiting_for_a_run(snap_compare, size, tmp_path, monkeypatch):
    # attach's screen names its root absolute: the root is the same folder name under a fixed parent
    root = Path("/tmp/magi-tui-snapshots/empty_root")
    try:
        root.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        pytest.skip(f"cannot make {root}: {exc}")
    if any(root.iterdir()):
        pytest.skip(f"{root} is not empty")
    assert snap_compare(MagiApp(root, live=True), terminal_size=size,
                        run_before=_waiting)


async def _waiting(pilot) -> None:
    await _on(pilot, "WaitingScreen", None)
    await _shows(pilot, "no run yet")


@sizes
def test_program_run_with_its_output(snap_compare, size):
    """``magi-tui run``'s screen: the run, its program's output below (a real program, ended)."""
    from magi_tui.live.runner import ProgramRunner
    from magi_tui.ui.screens.command import CommandRunScreen

    async def run_before(pilot):
        await _loaded(pilot)
        # one stream (two are read concurrently: their lines' order is the scheduler's); sh: named as typed
        runner = ProgramRunner(["sh", "-c", "echo 'step 1: loss 2.31'; echo 'step 2: loss 1.87'"])
        await runner.run()
        pilot.app.push_screen(CommandRunScreen(COLD, runner))
        await _on(pilot, "CommandRunScreen")
        await _shows(pilot, "the program exited with code 0", "Status RECOVERED")

    assert snap_compare(MagiApp(COLD), terminal_size=size, run_before=run_before)


@sizes
def test_history_of_a_ci_like_run_series(snap_compare, size, tmp_path, monkeypatch):
    """H on the runs list: 24 runs made from a real log (tests/support/history_runs.py), a real graph break in
    runs 10..15, compile time drifting; its appearance and disappearance on screen."""
    from magi_tui.history.locate import DEFAULT_NAME
    from magi_tui.history.write import index_runs
    from tests.support.history_runs import Plan, make_history

    make_history(tmp_path / "runs", Plan(24, break_from=10, break_until=16, labels=("ci",)))
    index_runs([tmp_path / "runs"], tmp_path / "runs" / DEFAULT_NAME)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("MAGI_TUI_INDEX", raising=False)

    async def run_before(pilot):
        await _on(pilot, "RunsScreen", "rows")
        await pilot.press("H")
        await _on(pilot, "HistoryScreen")
        await _shows(pilot, "appeared ")

    assert snap_compare(MagiApp(Path("runs")), terminal_size=size, run_before=run_before)
