"""Issue #11 in one script: every row of the speed table against its anchor, measured in the same run,
interleaved (ours, anchor, ours, anchor, ...), each in a fresh process, medians of ``--repeat``.

    .venv/bin/python benchmarks/bench_speed.py [--events 100000] [--repeat 3] [--toolong /tmp/tl/bin/python]
                                               [--skip-live] [--live-seconds 10]

Figures are CPU seconds of the whole process (user + system, all threads), because the machine is
shared and wall time is noisy; wall seconds are printed beside them.

* ``tui_load``: ``MagiApp(run)`` under ``run_test(120x40)``, from interpreter start to ``RunScreen.loaded``
  (the whole run read, folded in and the tree on screen). Anchor: toolong (``toolong.ui.UI``, same size)
  from interpreter start to the whole file indexed and painted. toolong pins ``textual<0.59``, so it
  runs from its own venv (``--toolong``: its python; ``pip install toolong`` into a venv under /tmp).
  Both run as installed: toolong from the bytecode pip compiled into its venv, ours from bytecode
  compiled beforehand (see the diff rows; without it each launch compiled our sources, ~0.07 s).
* ``tui_peak_rss``: VmHWM of those two processes. ``tui_load_wall``: the same launches' wall seconds.
  ``tui_first_screen`` (CPU) / ``_wall``: the same launches to their first screen one can move through:
  ours the run screen's tree holding the first read's events with a cursor, toolong its first lines
  (each process goes on reading after it; both polled every 5 ms).
* ``triage_json``: ``python -m magi_tui triage --json RUN`` (whole process, its output to /dev/null; from
  bytecode compiled beforehand, as installed).
  Anchors: a loop of ``orjson.loads`` per line, and of ``json.loads``, each a whole process.
  ``triage_json_fixed``: the same command and the orjson loop on a 10-event run, interleaved with them: the
  part of the row that does not grow with the run (interpreter, imports, the command line).
* ``diff``: two 20,000-line graph dumps (1 % of lines changed, a few inserted and removed). Anchor: a
  plain ``difflib.unified_diff`` process on the same files (whole process: start, read, diff).
  ``diff_20k_d``: the real path, ``MagiApp`` on a run whose after/before pair has those two graphs
  (written by the tracer's own ``RunWriter``), the after event selected and the app idle, from pressing
  ``d`` to the DiffScreen painted with the diff. ``diff_20k``: the DiffScreen alone on a bare ``App``,
  from ``push_screen``. CPU and wall run to the test pilot's ``pause()`` after the diff is in (all the
  work it set off done, e.g. the covered screen's footer); ``*_frame_wall`` / ``*_frame_cpu`` to the
  first frame with the diff handed to the terminal, i.e. the diff on screen: the row to read for
  "visible". The pilot's ``pause()`` ends only after a 20 ms window with under 1 ms of CPU
  (``textual._wait.wait_for_idle``), and the window holding the frame is not one, so ``wall_s`` is the
  frame plus ~40 ms of waiting that no user sees and the anchor does not pay. These processes and
  the anchor run with bytecode compiled beforehand, as installed (this workspace sets
  ``PYTHONDONTWRITEBYTECODE``, and ``d`` imports the diff screen on first use).
  Where the time goes: ``diff_20k_model`` is the diff alone in that process (both sides read, lines
  matched, rows laid out) against ``difflib.unified_diff`` alone in the same process;
  ``diff_screen_200_lines`` is the same screen on a 200-line pair (mounting, keys, painting).
* ``terminal``: one appended event -> on screen in a real terminal: ``magi-tui attach RUN`` and toolong's
  ``tl FILE`` each in a tmux pane (120x40), one line appended every 0.25 s, ``capture-pane`` polled until
  the line's token shows (the poll itself costs a few ms, the same for both).
* ``live``: ``benchmarks/bench_live.py`` at 1,000 events/s, follow on, ``--repeat`` runs, medians (goal
  p50 <= 30 ms, p99 <= 100 ms, 0 lost).

Prints one JSON object: per row the medians, the anchor's, and ``ratio`` (ours / anchor; <= 1 meets
the goal).
"""

from __future__ import annotations

import argparse
import json
import os
import random
import statistics
import subprocess
import sys
import tempfile
import time
from contextlib import contextmanager
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))


def _cpu() -> float:
    import resource

    r = resource.getrusage(resource.RUSAGE_SELF)
    return r.ru_utime + r.ru_stime


def _hwm_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    return 0.0


# -- children --------------------------------------------------------------------------------------
def _first_frame_with_diff(app, stamp: dict) -> None:
    """Stamp (wall, CPU) the first frame handed to the terminal while a DiffScreen with its diff is on
    top: the diff on screen, without the test pilot's idle wait after it."""
    from magi_tui.ui.screens.diff import DiffScreen

    display = app._display

    def _display(screen, renderable) -> None:
        display(screen, renderable)
        if renderable is not None and not stamp and isinstance(screen, DiffScreen) and screen.diff is not None:
            stamp.update(wall=time.perf_counter(), cpu=_cpu())

    app._display = _display


async def _until(cond, what: str, step: float = 0.005, timeout: float = 60) -> None:
    """Poll ``cond`` (a child must fail, not hang, when the app breaks)."""
    import asyncio

    end = time.monotonic() + timeout
    while not cond():
        if time.monotonic() > end:
            raise RuntimeError(f"timed out waiting for {what}")
        await asyncio.sleep(step)


def child_tui(run: str, analysed: bool = False) -> dict:
    """The app on ``run`` until wholly loaded (``RunScreen.loaded``): ``first_*`` at the first screen,
    ``cpu_s``/``wall_s``/``peak_rss_mb`` at the load. ``analysed``: then on until the triage panel's analysis
    of the loaded run (started by the load's end, in a thread) is in and shown: its throttle holds a result
    for all the run's events and no analysis runs (``analysed_cpu_s``/``analysed_wall_s``); ``peak_rss_mb``
    is then the peak with it, ``loaded_peak_rss_mb`` the peak at the load."""
    import asyncio

    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen
    from magi_tui.ui.widgets.event_tree import EventTree
    from magi_tui.ui.widgets.triage_panel import TriagePanel

    out: dict = {}

    async def main() -> None:
        t0 = time.perf_counter()
        app = MagiApp(Path(run))
        async with app.run_test(size=(120, 40)) as pilot:
            while not (isinstance(app.screen, RunScreen) and app.screen.loaded):
                if "first_cpu_s" not in out and isinstance(app.screen, RunScreen) and app.screen.run.events \
                        and app.screen.query_one(EventTree).cursor_node is not None:
                    # the first screen: the tree holds the first read's events and has a cursor (keys move it)
                    out.update(first_cpu_s=_cpu(), first_wall_s=time.perf_counter() - t0)
                await asyncio.sleep(0.005)
            await pilot.pause()
            out.update(cpu_s=_cpu(), wall_s=time.perf_counter() - t0, events=len(app.screen.run.events),
                       peak_rss_mb=_hwm_mb())
            out.setdefault("first_cpu_s", out["cpu_s"])
            out.setdefault("first_wall_s", out["wall_s"])
            if analysed:
                screen = app.screen
                th = screen.query_one(TriagePanel).throttle
                await _until(lambda: th.result is not None and th.n == len(screen.run.events)
                             and not th.thread_running and not th.catch_up_pending,
                             "the triage panel's analysis", timeout=300)
                await pilot.pause()
                out.update(analysed_cpu_s=_cpu(), analysed_wall_s=time.perf_counter() - t0,
                           loaded_peak_rss_mb=out["peak_rss_mb"], peak_rss_mb=_hwm_mb())

    asyncio.run(main())
    return out


_TOOLONG_CHILD = r'''
import asyncio, json, resource, sys, time
def cpu():
    r = resource.getrusage(resource.RUSAGE_SELF); return r.ru_utime + r.ru_stime
def hwm():
    for line in open("/proc/self/status"):
        if line.startswith("VmHWM:"): return int(line.split()[1]) / 1024
path, n = sys.argv[1], int(sys.argv[2])
from toolong.ui import UI
from toolong.log_lines import LogLines
async def main():
    t0 = time.perf_counter()
    app = UI([path])
    first = {}
    async with app.run_test(size=(120, 40)) as pilot:
        while True:
            ll = app.screen.query(LogLines)
            if ll and not first and ll.first().line_count > 0:  # the first screen: lines to move through
                first = {"first_cpu_s": cpu(), "first_wall_s": time.perf_counter() - t0}
            if ll and ll.first().line_count >= n:
                break
            await asyncio.sleep(0.005)
        await pilot.pause()
        out = {"cpu_s": cpu(), "wall_s": time.perf_counter() - t0, "lines": ll.first().line_count,
               "peak_rss_mb": hwm()}
        out.update(first or {"first_cpu_s": out["cpu_s"], "first_wall_s": out["wall_s"]})
        print(json.dumps(out))
asyncio.run(main())
'''


def child_diff(a: str, b: str) -> dict:
    import asyncio

    from textual.app import App

    from magi_tui.ui.screens.diff import DiffScreen
    from magi_tui.ui.widgets.diff_view import DiffView

    class Ref:
        def __init__(self, p: str) -> None:
            self.path = Path(p)
            self.title = Path(p).name

    class DiffApp(App):
        pass

    out: dict = {}

    async def main(left: str, right: str) -> None:
        app = DiffApp()
        frame: dict = {}
        async with app.run_test(size=(160, 50)) as pilot:
            await pilot.pause()
            _first_frame_with_diff(app, frame)
            c0, t0 = _cpu(), time.perf_counter()
            screen = DiffScreen(Ref(left), Ref(right))
            app.push_screen(screen)
            await _until(lambda: screen.diff is not None, "the diff", step=0.002)
            await pilot.pause()
            view = screen.query_one(DiffView)
            out.update(cpu_s=_cpu() - c0, wall_s=time.perf_counter() - t0, rows=len(view.rows),
                       added=screen.diff.added, removed=screen.diff.removed, frame_wall_s=frame["wall"] - t0,
                       frame_cpu_s=frame["cpu"] - c0)

    asyncio.run(main(a, b))
    big = dict(out)
    # where the time goes: the same screen on a 200-line pair (what any screen costs) ...
    small = []
    for src in (a, b):
        p = Path(src).with_name("small_" + Path(src).name)
        p.write_text("".join(Path(src).read_text().splitlines(True)[:200]))
        small.append(str(p))
    asyncio.run(main(*small))
    big["screen_200_lines_cpu_s"] = out["cpu_s"]
    # ... and the diff alone (read, matched, laid out) against difflib alone, in this process
    import difflib
    import gc

    from magi_tui.model.analysis.diff import compute_diff, read_side

    gc.collect()
    c0 = _cpu()
    compute_diff(read_side(a)[0], read_side(b)[0])
    big["model_cpu_s"] = _cpu() - c0
    gc.collect()
    c0 = _cpu()
    with open(a) as fa, open(b) as fb:
        list(difflib.unified_diff(fa.readlines(), fb.readlines()))
    big["difflib_in_process_cpu_s"] = _cpu() - c0
    return big


def child_diff_d(run: str) -> dict:
    """The real ``d``: a RunScreen on ``run`` with its after event selected, the app idle; from the
    key press to the DiffScreen painted with the diff."""
    import asyncio

    from textual._wait import wait_for_idle
    from textual.worker import WorkerState

    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.diff import DiffScreen
    from magi_tui.ui.screens.run import RunScreen

    out: dict = {}

    async def main() -> None:
        app = MagiApp(Path(run))
        async with app.run_test(size=(160, 50)) as pilot:
            await _until(lambda: isinstance(app.screen, RunScreen) and app.screen.loaded, "the run loaded")
            screen = app.screen
            screen.jump_to(next(e for e in screen.run.events if "_after_" in e.name))
            await pilot.pause()
            # the detail reads the selected graph on a worker: let it finish before the clock starts
            await _until(lambda: not any(w.state in (WorkerState.PENDING, WorkerState.RUNNING) for w in app.workers),
                         "the detail's workers")
            await wait_for_idle(0.2)
            frame: dict = {}
            _first_frame_with_diff(app, frame)
            c0, t0 = _cpu(), time.perf_counter()
            await pilot.press("d")
            await _until(lambda: isinstance(app.screen, DiffScreen) and app.screen.diff is not None, "the diff",
                         step=0.002)
            await pilot.pause()
            d = app.screen
            out.update(cpu_s=_cpu() - c0, wall_s=time.perf_counter() - t0, added=d.diff.added,
                       removed=d.diff.removed, frame_wall_s=frame["wall"] - t0, frame_cpu_s=frame["cpu"] - c0)

    asyncio.run(main())
    return out


# -- one appended event -> on screen, in a real terminal (tmux) ------------------------------------
def terminal_latency(command: str, timeline: Path, n: int, ready: str) -> dict:
    """Start ``command`` in a private tmux server, wait for ``ready`` on screen, then ``n`` times append
    one line carrying a fresh token and poll ``capture-pane`` until the token is on screen."""
    import shutil
    import uuid

    if shutil.which("tmux") is None:
        return {"error": "tmux not found"}
    sock = f"bench-{uuid.uuid4().hex[:8]}"
    env = dict(os.environ, TERM="xterm-256color")
    subprocess.run(["tmux", "-L", sock, "new-session", "-d", "-x", "120", "-y", "40", command], check=True, env=env)

    def screen() -> str:
        return subprocess.run(["tmux", "-L", sock, "capture-pane", "-p"], capture_output=True, text=True).stdout

    try:
        end = time.monotonic() + 60
        while ready not in screen():
            if time.monotonic() > end:
                return {"error": f"{ready!r} never on screen: {screen()[-500:]}"}
            time.sleep(0.05)
        time.sleep(1.0)
        with open(timeline) as fh:
            last_index = max(json.loads(line).get("index", 0) for line in fh if line.strip())
        lags = []
        for k in range(n):
            token = f"probe{k:03d}z"
            line = json.dumps({"index": last_index + 1 + k, "name": f"fullgraph_{token}",
                               "timestamp": time.time(), "attributes": {}}) + "\n"
            with open(timeline, "a") as fh:
                t0 = time.perf_counter()
                fh.write(line)
            deadline = t0 + 5
            while token not in screen():
                if time.perf_counter() > deadline:
                    break
            else:
                lags.append((time.perf_counter() - t0) * 1000)
            time.sleep(0.25)
    finally:
        subprocess.run(["tmux", "-L", sock, "kill-server"], capture_output=True)
    lags.sort()
    if not lags:
        return {"error": "no appended line ever showed", "lost": n}
    return {"p50_ms": round(lags[len(lags) // 2], 1), "p99_ms": round(lags[min(len(lags) - 1, int(0.99 * len(lags)))], 1),
            "n": len(lags), "lost": n - len(lags)}


# -- data ------------------------------------------------------------------------------------------
def write_graph_pair(folder: Path, n: int = 20_000, seed: int = 0) -> tuple[Path, Path]:
    rng = random.Random(seed)
    ops = ["add.Tensor", "mul.Tensor", "mm.default", "view.default", "permute.default", "relu.default",
           "sum.dim_IntList", "native_layer_norm.default", "clone.default", "expand.default"]
    lines = []
    for i in range(n):
        op = rng.choice(ops)
        lines.append(f"    %{op.split('.')[0]}_{i} : [num_users=1] = call_function[target=torch.ops.aten.{op}]"
                     f"(args = (%arg_{rng.randrange(i + 1)}, %buf_{rng.randrange(i + 1)}), kwargs = {{}})\n")
    b = list(lines)
    for _ in range(n // 100):  # 1 % changed
        k = rng.randrange(n)
        b[k] = b[k].replace("num_users=1", "num_users=2")
    for _ in range(20):  # a few inserted and removed
        k = rng.randrange(len(b))
        if rng.random() < 0.5:
            del b[k]
        else:
            b.insert(k, f"    %extra_{k} : [num_users=0] = call_function[target=torch.ops.aten.clone.default]\n")
    pa, pb = folder / "before_graph.txt", folder / "after_graph.txt"
    pa.write_text("".join(lines))
    pb.write_text("".join(b))
    return pa, pb


def write_graph_pair_run(folder: Path, a: Path, b: Path) -> Path:
    """A run (written by the tracer's own writer) whose PostCleanupPass before/after events carry
    ``a`` and ``b`` as their graphs: ``d`` on the after event diffs them."""
    from tracer.writer import RunWriter

    run = folder / "magi_depyf" / "run_20261122_111900" / "model_1_Diff_rank_0"
    attrs = {"scope": "subgraph", "subgraph": "submod_0", "subgraph_index": 0, "lifecycle_name": "PostCleanupPass",
             "runtime_shape": None, "pass_stage": "post_grad"}
    w = RunWriter(run)
    try:
        w.write("subgraph_0_before_postcleanuppass", dict(attrs), {"before_postcleanuppass_graph.txt": a.read_text()})
        w.write("subgraph_0_after_postcleanuppass", dict(attrs, duration_ms=0.23),
                {"after_lifecycle_graph.txt": b.read_text()})
    finally:
        w.close()
    return run


# -- the driver ------------------------------------------------------------------------------------
def _run_child(args: list[str], python: str = sys.executable, env: dict | None = None) -> dict:
    proc = subprocess.run([python, *args], capture_output=True, text=True, check=False, env=env)
    if proc.returncode != 0:
        raise RuntimeError(f"{args[:2]} failed: {proc.stderr[-2000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def _whole_process(cmd: list[str]) -> dict:
    """CPU (user + sys) and wall of one whole process, from ``wait4``'s rusage."""
    t = time.perf_counter()
    p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    err = p.stderr.read().decode(errors="replace") if p.stderr else ""
    if p.returncode not in (0, 1):  # triage exits 1 on a failed run
        raise RuntimeError(f"{cmd[:4]} exited {p.returncode}: {err[-2000:]}")
    return {"cpu_s": ru.ru_utime + ru.ru_stime, "wall_s": time.perf_counter() - t, "peak_rss_mb": ru.ru_maxrss / 1024}


_ORJSON_LOOP = "import orjson,sys\nwith open(sys.argv[1],'rb') as fh:\n    objs=[orjson.loads(l) for l in fh]\n"
_JSON_LOOP = "import json,sys\nwith open(sys.argv[1],'rb') as fh:\n    objs=[json.loads(l) for l in fh]\n"
_DIFFLIB = ("import difflib,sys\na=open(sys.argv[1]).readlines()\nb=open(sys.argv[2]).readlines()\n"
            "d=list(difflib.unified_diff(a,b))\n")


@contextmanager
def _installed_bytecode(folder: Path):
    """The diff rows' processes as on an installed copy: bytecode compiled once (as ``pip install``
    does), in ``folder``, before anything is measured. The ``d`` path imports the diff screen on first
    use, and with ``PYTHONDONTWRITEBYTECODE`` (this workspace sets it) that import would compile four
    sources inside the measured interval, every time. The anchor runs the same way."""
    saved = {k: os.environ.get(k) for k in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
    os.environ["PYTHONPYCACHEPREFIX"] = str(folder)
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    try:
        subprocess.run([sys.executable, "-c", "import compileall, difflib, tracer.writer, magi_tui.ui.app, "
                        "magi_tui.ui.screens.run, magi_tui.ui.screens.diff; "
                        "compileall.compile_dir('magi_tui', quiet=1); compileall.compile_dir('magi_format', quiet=1)"],
                       cwd=ROOT, check=True)
        yield
    finally:
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v


def _med(rows: list[dict], key: str) -> float | None:
    vals = [r[key] for r in rows if r.get(key) is not None]
    return round(statistics.median(vals), 3) if vals else None


def _row(ours: list[dict], anchors: dict[str, list[dict]], key: str = "cpu_s", **extra) -> dict:
    out = {"ours": _med(ours, key), "ours_wall_s": _med(ours, "wall_s"), "all_ours": [round(r[key], 3) for r in ours]}
    for name, rows in anchors.items():
        if rows:
            out[name] = _med(rows, key)
            out[f"all_{name}"] = [round(r[key], 3) for r in rows]
            if out["ours"] is not None and out[name]:
                out[f"ratio_vs_{name}"] = round(out["ours"] / out[name], 2)
    out.update(extra)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--toolong", default="/tmp/toolong_venv/bin/python",
                    help="a python with toolong installed (its own venv: it pins textual<0.59)")
    ap.add_argument("--only", nargs="*", default=["tui", "triage", "diff", "live", "terminal"])
    ap.add_argument("--terminal-samples", type=int, default=30)
    ap.add_argument("--live-seconds", type=float, default=10)
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        res = {"tui": child_tui, "diff": child_diff, "diff_d": child_diff_d}[kind](*rest)
        print(json.dumps(res))
        return

    from synth import write_synthetic_run

    results: dict = {"events": args.events, "repeat": args.repeat, "python": sys.version.split()[0]}
    have_toolong = Path(args.toolong).exists() and subprocess.run(
        [args.toolong, "-c", "import toolong"], capture_output=True).returncode == 0
    with tempfile.TemporaryDirectory(prefix="bench_speed_") as tmp:
        run = Path(tmp) / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
        write_synthetic_run(run, args.events)
        timeline = run / "timeline_events" / "timeline.jsonl"
        n_lines = sum(1 for _ in open(timeline, "rb"))
        results["timeline_mb"] = round(timeline.stat().st_size / 1e6, 1)

        if "tui" in args.only:
            ours, tl = [], []
            tl_script = Path(tmp) / "toolong_child.py"
            tl_script.write_text(_TOOLONG_CHILD)
            # both as installed: toolong from its venv's own bytecode (pip compiled it), ours from bytecode
            # compiled beforehand (without it every launch compiled ~120 of our sources: ~0.07 s of CPU)
            tl_env = {k: v for k, v in os.environ.items() if k != "PYTHONPYCACHEPREFIX"}
            with _installed_bytecode(Path(tmp) / "pyc"):
                for _ in range(args.repeat):
                    ours.append(_run_child([__file__, "--child", "tui", str(run)]))
                    if have_toolong:
                        tl.append(_run_child([str(tl_script), str(timeline), str(n_lines)], python=args.toolong,
                                             env=tl_env))
            results["tui_load"] = _row(ours, {"toolong": tl}, events=ours[0]["events"],
                                       note=None if have_toolong else "toolong not installed: no anchor")
            results["tui_peak_rss_mb"] = _row(ours, {"toolong": tl}, key="peak_rss_mb")
            # wall clock too (the first measurement was a stopwatch): our read runs in a thread beside
            # the UI loop, so on 2 cores wall < CPU; noisier on a shared machine, read beside the CPU row
            results["tui_load_wall"] = _row(ours, {"toolong": tl}, key="wall_s")
            # the first screen, on both sides: ours the tree of the first read with a cursor, toolong its
            # first lines; each keeps reading after it (not the row: that one is "loaded")
            results["tui_first_screen"] = _row(ours, {"toolong": tl}, key="first_cpu_s")
            results["tui_first_screen_wall"] = _row(ours, {"toolong": tl}, key="first_wall_s")

        if "triage" in args.only:
            ours, oj, js = [], [], []
            # an anchor that cannot run is no anchor (without orjson its process exited at once, and the ratio
            # against it read 21x)
            have_orjson = subprocess.run([sys.executable, "-c", "import orjson"], capture_output=True).returncode == 0
            # as installed (bytecode compiled beforehand), like the other rows: without it a workspace that
            # sets PYTHONDONTWRITEBYTECODE compiles whatever sources have no up-to-date bytecode, every launch
            # the fixed part of both (start-up, imports): the same commands on a 10-event run
            small = Path(tmp) / "small" / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
            write_synthetic_run(small, 10)
            small_timeline = small / "timeline_events" / "timeline.jsonl"
            ours_fixed, oj_fixed = [], []
            with _installed_bytecode(Path(tmp) / "pyc"):
                for _ in range(args.repeat):
                    ours.append(_whole_process([sys.executable, "-m", "magi_tui", "triage", "--json", str(run)]))
                    if have_orjson:
                        oj.append(_whole_process([sys.executable, "-c", _ORJSON_LOOP, str(timeline)]))
                    js.append(_whole_process([sys.executable, "-c", _JSON_LOOP, str(timeline)]))
                    ours_fixed.append(_whole_process([sys.executable, "-m", "magi_tui", "triage", "--json",
                                                      str(small)]))
                    if have_orjson:
                        oj_fixed.append(_whole_process([sys.executable, "-c", _ORJSON_LOOP, str(small_timeline)]))
            results["triage_json_fixed"] = _row(ours_fixed, {"orjson_loop": oj_fixed},
                                                note="the same commands on a 10-event run: start-up and imports")
            results["triage_json"] = _row(ours, {"orjson_loop": oj, "json_loop": js} if have_orjson else
                                          {"json_loop": js},
                                          note=None if have_orjson else "orjson not installed: json loop only")

        if "diff" in args.only:
            a, b = write_graph_pair(Path(tmp))
            pair_run = write_graph_pair_run(Path(tmp) / "pair", a, b)
            ours, ours_d, dl = [], [], []
            with _installed_bytecode(Path(tmp) / "pyc"):
                for _ in range(args.repeat):  # interleaved: d, the screen alone, the anchor
                    ours_d.append(_run_child([__file__, "--child", "diff_d", str(pair_run)]))
                    ours.append(_run_child([__file__, "--child", "diff", str(a), str(b)]))
                    dl.append(_whole_process([sys.executable, "-c", _DIFFLIB, str(a), str(b)]))
            results["diff_20k_d"] = _row(ours_d, {"difflib_process": dl}, added=ours_d[0]["added"],
                                         removed=ours_d[0]["removed"])
            results["diff_20k_d_wall"] = _row(ours_d, {"difflib_process": dl}, key="wall_s")
            for r in dl:
                r["frame_wall_s"] = r["wall_s"]  # the anchor's output is complete when it exits
            results["diff_20k_d_frame_wall"] = _row(ours_d, {"difflib_process": dl}, key="frame_wall_s")
            results["diff_20k_d_frame_cpu"] = _row([dict(r, cpu_s=r["frame_cpu_s"]) for r in ours_d],
                                                   {"difflib_process": dl})
            results["diff_20k"] = _row(ours, {"difflib_process": dl}, rows=ours[0]["rows"])
            results["diff_20k_wall"] = _row(ours, {"difflib_process": dl}, key="wall_s")
            results["diff_20k_frame_wall"] = _row(ours, {"difflib_process": dl}, key="frame_wall_s")
            results["diff_20k_model"] = _row([{"cpu_s": r["model_cpu_s"]} for r in ours],
                                             {"difflib_in_process": [{"cpu_s": r["difflib_in_process_cpu_s"]}
                                                                     for r in ours]})
            results["diff_screen_200_lines"] = _row([{"cpu_s": r["screen_200_lines_cpu_s"]} for r in ours], {})

    if "terminal" in args.only:
        with tempfile.TemporaryDirectory(prefix="bench_term_") as tmp:
            magi = f"cd {ROOT} && {sys.executable} -m magi_tui"  # this checkout's code
            tl_bin = str(Path(args.toolong).with_name("tl"))
            rows = {}
            for name, cmd in (("ours", f"{magi} attach {{run}}"), ("toolong", f"{tl_bin} {{tl}}")):
                if name == "toolong" and not have_toolong:
                    continue
                run = Path(tmp) / name / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
                write_synthetic_run(run, 2000, with_files=0)
                tl = run / "timeline_events" / "timeline.jsonl"
                rows[name] = terminal_latency(cmd.format(run=run, tl=tl) + "; sleep 5", tl, args.terminal_samples,
                                              ready="LIVE" if name == "ours" else "TAIL")
            results["terminal_append_to_screen"] = rows
            if "p50_ms" in rows.get("ours", {}) and "p50_ms" in rows.get("toolong", {}):
                rows["ratio_p50"] = round(rows["ours"]["p50_ms"] / rows["toolong"]["p50_ms"], 2)
                rows["ratio_p99"] = round(rows["ours"]["p99_ms"] / rows["toolong"]["p99_ms"], 2)

    if "live" in args.only:
        runs, errors = [], []
        for _ in range(args.repeat):
            proc = subprocess.run([sys.executable, str(HERE / "bench_live.py"), "--rates", "1000",
                                   "--seconds", str(args.live_seconds), "--idle-seconds", "2"],
                                  capture_output=True, text=True, check=False)
            rows = [json.loads(line) for line in proc.stdout.splitlines() if line.startswith("{\"rate")]
            if rows:
                runs.append(rows[0])
            else:
                errors.append(proc.stderr[-1500:])
        if runs:
            med = {m: {q: round(statistics.median(r[m][q] for r in runs), 1) for q in ("p50", "p99", "max")}
                   for m in ("latency_ms", "applied_ms", "read_ms")}
            results["live_1000_per_s"] = {
                **med, "lost": sum(r["lost"] for r in runs), "duplicated": sum(r["duplicated"] for r in runs),
                "all_p50_p99": [(r["latency_ms"]["p50"], r["latency_ms"]["p99"]) for r in runs],
                "cpu_busy_pct": round(statistics.median(r["cpu_busy_pct"] for r in runs), 1),
                "goal_met": (sum(r["lost"] for r in runs) == 0 and med["latency_ms"]["p50"] <= 30
                             and med["latency_ms"]["p99"] <= 100)}
        else:
            results["live_1000_per_s"] = {"error": errors[-1] if errors else "no result"}
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
