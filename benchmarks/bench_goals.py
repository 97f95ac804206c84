"""Issue 36's "speed goals users feel": every row against its anchor, measured in the same run, interleaved
(ours, anchor, ours, anchor, ...), each side a fresh process, medians of ``--repeat``.

    .venv/bin/python benchmarks/bench_goals.py [--code DIR ...] [--repeat 3] [--quick] [--only 1 2 3 4 5 6]
                                               [--events 100000] [--mib 1024] [--diff-lines 20000]
                                               [--compiles 100000] [--frames N] [--toolong /tmp/tl/bin/python]

``--code DIR`` (repeatable): the checkout whose ``magi_tui`` is "ours" (default: this one). Given twice
(``--code /tmp/before --code .``, a ``git worktree`` of the older commit), every row measures both codes
interleaved with one anchor: before and after a change in one run. The inputs are written once, by this
checkout. Each code runs as installed: its bytecode compiled beforehand (``_common.compile_code``).

Figures: CPU seconds (user + system, all threads) and wall seconds of the whole process, peak RSS where a
row names memory. The machine is shared: read the ratios, not absolute seconds; the load average is
printed. The rows (and which figure decides "holds?"):

1. ``first_screen``: launch -> the first screen you can move through, 100k-event run: the app under
   ``run_test(120x40)`` until the run screen's tree holds the first read's events with a cursor
   (``bench_speed.child_tui``), against toolong's launch on the same file until its first lines show
   (``bench_speed._TOOLONG_CHILD``, from its own venv: it pins an older Textual). Wall from the driver's
   spawn of the process. Goal: CPU <= 1.0x.
2. ``triage_json``: ``python -m magi_tui triage --json RUN`` (100k events) against a process looping
   ``orjson.loads`` over the same lines (and one looping ``msgspec.json.decode``, printed beside it).
   Goal: CPU <= 1.0x the orjson loop.
3. ``log_triage``: a ``--mib`` TORCH_TRACE log (real records repeated as new frames:
   ``bench_log_triage.make_log``): ``triage LOG --json`` against ``tlparse LOG`` (CPU <= 0.25x), triage's
   peak RSS <= 400 MB; ``log_first_screen``: the app on the log, launch -> first screen (wall <= 2 s),
   then one Down key sent through the driver while the rest is still read: it must move the cursor.
4. ``diff_d``: ``d`` on a 20k-line graph diff (``bench_speed.write_graph_pair``), as a user sees it: the
   app in a real terminal (tmux, private socket), the after event selected and the app idle, from sending
   ``d`` to a screen showing the diff's hunk line and its body (``capture-pane`` polled), against a fresh
   Python process running ``difflib.unified_diff`` on the same two files. Goal: wall <= 1.0x.
5. ``fail_after_f``: a 100k-event run whose only failed event is its last: launch in tmux -> first
   screen -> ``f`` (pressed again every 50 ms while the run is still read and it has nothing to jump
   to) -> the tree showing ``#99999 failed_aot_compile``; against toolong's ``tl FILE`` in tmux, launch ->
   the last line on screen. Goal: wall <= 2.0x (a guard).
6. ``compile_ids``: the app on a run of ``--compiles`` compile ids (``bench_scale``'s input: the events the
   TORCH_TRACE reader makes of ``synth.write_trace_log``) until wholly loaded and then until the triage
   panel's analysis of it (which the load's end starts) is in and shown, against ``triage --json`` of the
   same code on it. The CPU figure is the load's (launch -> loaded: the wait a user feels before moving
   through the run; the CPU with the analysis is printed beside it, ``analysed_cpu_s``), the app's peak RSS
   the peak with the analysis (what the app holds; ``loaded_peak_rss_mb``: the peak at the load). Goal:
   CPU <= 2.0x, the app's peak RSS <= 300 MB.

Prints a markdown table (row, ours, anchor, ratio, goal, holds?) per code, then one JSON object.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from datetime import datetime, timezone
from pathlib import Path
from typing import Any, Callable

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
import _common as C  # noqa: E402
from bench_speed import _DIFFLIB, _ORJSON_LOOP, _TOOLONG_CHILD, _cpu, _hwm_mb  # noqa: E402

ROOT = C.ROOT
PY = sys.executable
RUN_PARTS = ("magi_depyf", "run_20261122_111900")
_MSGSPEC_LOOP = ("import msgspec,sys\ndecode=msgspec.json.Decoder().decode\n"
                 "with open(sys.argv[1],'rb') as fh:\n    objs=[decode(l) for l in fh]\n")
# toolong's child with its clock started at the driver's spawn of the process (BENCH_T0, a perf_counter
# value: CLOCK_MONOTONIC, the same in every process), not after its imports
_TOOLONG_FROM_LAUNCH = _TOOLONG_CHILD.replace("t0 = time.perf_counter()",
                                              "t0 = float(__import__('os').environ['BENCH_T0'])")
assert _TOOLONG_FROM_LAUNCH != _TOOLONG_CHILD, "bench_speed's toolong child changed: its clock start not found"


# -- children (run with --code's checkout first on sys.path) ---------------------------------------
def _check_code(code: str) -> str:
    import magi_tui

    where = str(Path(magi_tui.__file__).resolve())
    if not where.startswith(str(Path(code).resolve()) + os.sep):
        raise SystemExit(f"magi_tui imported from {where}, not from {code}")
    return where


def child_tui(run: str, code: str, analysed: bool = False) -> dict:
    """``bench_speed.child_tui`` on ``code``; ``first_launch_wall_s``: from the driver's spawn. ``analysed``:
    on until the triage panel's analysis of the loaded run is in (``bench_speed.child_tui``)."""
    import bench_speed

    import magi_tui.ui.app  # noqa: F401  (imported before the clock, as child_tui does)
    import magi_tui.ui.screens.run  # noqa: F401
    import magi_tui.ui.widgets.event_tree  # noqa: F401

    _check_code(code)
    pre = time.perf_counter()
    out = bench_speed.child_tui(run, analysed)
    launch = float(os.environ.get("BENCH_T0", pre))
    out["first_launch_wall_s"] = pre - launch + out["first_wall_s"]
    out["launch_wall_s"] = pre - launch + out["wall_s"]
    return out


def child_first_keys(target: str, code: str) -> dict:
    """The app on ``target`` until its first screen (the tree holds events and has a cursor), then one
    Down key sent through the driver as a terminal would (``Pilot.press`` waits for the process to go
    idle, which a run still being read never does): the cursor must move while the rest is read.
    Leaves without waiting for the whole read (``os._exit``)."""
    import asyncio

    from textual import events

    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen
    from magi_tui.ui.widgets.event_tree import EventTree

    _check_code(code)
    launch = float(os.environ.get("BENCH_T0", time.perf_counter()))
    out: dict = {}

    async def main() -> None:
        app = MagiApp(Path(target))
        async with app.run_test(size=(120, 40)):
            end = time.perf_counter() + 120
            while True:
                s = app.screen
                if isinstance(s, RunScreen) and s.run.events and s.query_one(EventTree).cursor_node is not None:
                    break
                if time.perf_counter() > end:
                    raise RuntimeError("no first screen in 120 s")
                await asyncio.sleep(0.005)
            tree = s.query_one(EventTree)
            out.update(first_launch_wall_s=time.perf_counter() - launch, first_cpu_s=_cpu(),
                       events_at_first=len(s.run.events), loading_at_first=not s.loaded)
            line, t = tree.cursor_line, time.perf_counter()
            key = events.Key("down", None)
            key.set_sender(app)
            assert app._driver is not None
            app._driver.send_message(key)
            while tree.cursor_line == line and time.perf_counter() - t < 10:
                await asyncio.sleep(0.002)
            out.update(key_moved=tree.cursor_line != line, key_s=time.perf_counter() - t,
                       loading_after_key=not s.loaded, events_after_key=len(s.run.events), peak_rss_mb=_hwm_mb())
            print(json.dumps(out), flush=True)
            os._exit(0)

    asyncio.run(main())
    return out


def child_data(tmp: str, spec: str) -> dict:
    """Write every input the rows need (in a child: writing them makes a process big, and a child's peak
    RSS counts its parent's pages at fork)."""
    import bench_log_triage
    import bench_speed
    import synth

    a = json.loads(spec)
    t = Path(tmp)
    out: dict = {}
    rows = set(a["only"])
    if rows & {"1", "2"}:
        run = t / "ok" / Path(*RUN_PARTS) / "model_1_Synthetic_rank_0"
        synth.write_synthetic_run(run, a["events"])
        out["run"] = str(run)
    if "5" in rows:
        run = t / "fail" / Path(*RUN_PARTS) / "model_1_Synthetic_rank_0"
        synth.write_synthetic_run(run, a["events"], fail_last=True, restart_every=0)
        out["fail_run"] = str(run)
    if "3" in rows:
        (t / "log").mkdir()
        if a["frames"]:  # a log of many small frames (a service recompiling, a fuzz harness): bench_scale's
            log = synth.write_trace_log(t / "log" / "dedicated_log_torch_trace_frames.log", a["frames"])
        else:
            log = bench_log_triage.make_log(t / "log" / "dedicated_log_torch_trace_big.log", a["mib"])
        os.utime(log, (time.time() - 60,) * 2)  # a finished log, not one still written
        out["log"] = str(log)
    if "4" in rows:
        (t / "pair").mkdir()
        pa, pb = bench_speed.write_graph_pair(t / "pair", a["diff_lines"])
        out["pair"] = [str(pa), str(pb)]
        out["pair_run"] = str(bench_speed.write_graph_pair_run(t / "pair_run", pa, pb))
    if "6" in rows:
        log = synth.write_trace_log(t / "ids_src" / "dedicated_log_torch_trace_rank_0_src.log", a["compiles"])
        out["ids_run"] = str(synth.write_run_from_log(log, t / "ids" / Path(*RUN_PARTS) / "model_1_Fuzz_rank_0"))
        log.unlink()
    return out


# -- the rows --------------------------------------------------------------------------------------
class Bench:
    def __init__(self, args: argparse.Namespace, tmp: Path) -> None:
        self.a = args
        self.tmp = tmp
        self.codes = [str(Path(c).resolve()) for c in args.code]
        self.pyc = tmp / "pyc"
        self.load: list[tuple[float, float, float]] = []

    def env(self, code: str, **extra: str) -> dict[str, str]:
        return {**C.code_env(code, self.pyc), **extra}

    def ours(self, code: str, cmd: list[str], **kw: Any) -> dict:
        kw.setdefault("timeout", self.a.timeout)
        row = C.whole_process(cmd, cwd=code, env=self.env(code, BENCH_T0=repr(time.perf_counter())), **kw)
        return {**row, **row.pop("child", {})}

    def child(self, code: str, kind: str, target: str) -> dict:
        return self.ours(code, [PY, str(HERE / "bench_goals.py"), "--child", kind, target, "--code", code])

    def sample_load(self) -> None:
        self.load.append(C.load_average())

    # 1
    def first_screen(self, d: dict) -> dict:
        timeline = Path(d["run"]) / "timeline_events" / "timeline.jsonl"
        n = sum(1 for _ in open(timeline, "rb"))
        script = self.tmp / "toolong_child.py"
        script.write_text(_TOOLONG_FROM_LAUNCH)
        tl_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
        ours: dict[str, list] = {c: [] for c in self.codes}
        anchor: list[dict] = []
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self.child(c, "tui", d["run"]))
            anchor.append({**(r := C.whole_process([self.a.toolong, str(script), str(timeline), str(n)],
                                                   env=dict(tl_env, BENCH_T0=repr(time.perf_counter())))),
                           **r.pop("child", {})})
            self.sample_load()
        return {"ours": ours, "anchor": anchor, "anchor_name": "toolong launch -> first lines",
                "cpu_key": "first_cpu_s", "wall_key": "first_launch_wall_s", "decide": "cpu", "goal": 1.0}

    # 2
    def triage_json(self, d: dict) -> dict:
        timeline = str(Path(d["run"]) / "timeline_events" / "timeline.jsonl")
        ours: dict[str, list] = {c: [] for c in self.codes}
        anchor, msgspec_loop = [], []
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self.ours(c, [PY, "-m", "magi_tui", "triage", "--json", d["run"]]))
            anchor.append(C.whole_process([self.orjson_python, "-c", _ORJSON_LOOP, timeline]))
            msgspec_loop.append(C.whole_process([PY, "-c", _MSGSPEC_LOOP, timeline]))
            self.sample_load()
        return {"ours": ours, "anchor": anchor, "anchor_name": "orjson loop over the lines", "decide": "cpu",
                "goal": 1.0, "also": {"msgspec_loop": msgspec_loop}}

    # 3
    def log_triage(self, d: dict) -> tuple[dict, dict]:
        ours: dict[str, list] = {c: [] for c in self.codes}
        first: dict[str, list] = {c: [] for c in self.codes}
        anchor = []
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self.ours(c, [PY, "-m", "magi_tui", "triage", d["log"], "--json"]))
                first[c].append(self.child(c, "first_keys", d["log"]))
            if not self.a.no_anchor:
                anchor.append(C.whole_process([self.tlparse, d["log"], "--no-browser", "--overwrite", "-o",
                                               str(self.tmp / "tlparse_out")], ok=(0,)))
            self.sample_load()
        size = round(Path(d["log"]).stat().st_size / 2**20)
        what = f"{self.a.frames} frames, {size} MiB" if self.a.frames else f"{size} MiB"
        tri = {"ours": ours, "anchor": anchor, "anchor_name": f"tlparse on the {what} log", "decide": "cpu",
               "goal": 0.25, "rss_goal_mb": 400}
        fs = {"ours": first, "anchor": None, "anchor_name": "(absolute) first screen <= 2 s, a key moves the cursor"
              " while the log is still read", "wall_key": "first_launch_wall_s", "cpu_key": "first_cpu_s",
              "decide": "abs_wall", "goal": 2.0}
        return tri, fs

    # 4
    def diff_d(self, d: dict) -> dict:
        a, b = d["pair"]
        ours: dict[str, list] = {c: [] for c in self.codes}
        anchor = []
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self._diff_once(c, d["pair_run"]))
            anchor.append(C.whole_process([PY, "-c", _DIFFLIB, a, b], env=self.env(self.codes[0])))
            self.sample_load()
        return {"ours": ours, "anchor": anchor, "anchor_name": "a fresh python process running difflib",
                "decide": "wall", "goal": 1.0}

    def _diff_once(self, code: str, run: str) -> dict:
        with C.Tmux(f"{PY} -m magi_tui {run}", env=self.env(code)) as t:
            t.wait_for(lambda s: "PostCleanupPass" in s, "the run screen", step=0.02)
            t.wait_idle()
            t.send("Down")
            t.wait_for(lambda s: "subgraph_0_after_postcleanuppass" in s, "the after event selected", step=0.02)
            t.wait_idle()  # the detail read the selected graph on a worker: done before the clock starts
            c0, t0 = C.proc_cpu_s(t.pid), time.perf_counter()
            t.send("d")
            t1 = t.wait_for(lambda s: "hunk(s)" in s and "unchanged lines" in s, "the diff")
            return {"cpu_s": C.proc_cpu_s(t.pid) - c0, "wall_s": t1 - t0, "peak_rss_mb": C.proc_hwm_mb(t.pid)}

    # 5
    def fail_after_f(self, d: dict) -> dict:
        timeline = Path(d["fail_run"]) / "timeline_events" / "timeline.jsonl"
        last = json.loads(timeline.read_bytes().rstrip(b"\n").rsplit(b"\n", 1)[-1])
        token = f'"index": {last["index"]}'
        tree_row = f"#{last['index']:04d} failed_aot_compile"
        tl_bin = str(Path(self.a.toolong).with_name("tl"))
        tl_env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPYCACHEPREFIX", "PYTHONDONTWRITEBYTECODE")}
        ours: dict[str, list] = {c: [] for c in self.codes}
        anchor = []
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self._fail_once(c, d["fail_run"], tree_row))
            with C.Tmux(f"{tl_bin} {timeline}", env=tl_env) as t:
                t1 = t.wait_for(lambda s: token in s, "toolong's last line")
                anchor.append({"cpu_s": C.proc_cpu_s(t.pid), "wall_s": t1 - t.started,
                               "peak_rss_mb": C.proc_hwm_mb(t.pid)})
            self.sample_load()
        return {"ours": ours, "anchor": anchor, "anchor_name": "toolong launch -> the last line on screen",
                "decide": "wall", "goal": 2.0}

    def _fail_once(self, code: str, run: str, tree_row: str) -> dict:
        with C.Tmux(f"{PY} -m magi_tui {run}", env=self.env(code)) as t:
            first = t.wait_for(lambda s: "▼ fullgraph" in s, "the first screen")
            presses = 0
            end = time.perf_counter() + 120
            while True:
                t.send("f")
                presses += 1
                try:
                    t1 = t.wait_for(lambda s: tree_row in s, "the failure", timeout=0.05)
                    break
                except RuntimeError:
                    if time.perf_counter() > end:
                        raise
            return {"cpu_s": C.proc_cpu_s(t.pid), "wall_s": t1 - t.started, "first_wall_s": first - t.started,
                    "presses": presses, "peak_rss_mb": C.proc_hwm_mb(t.pid)}

    # 6
    def compile_ids(self, d: dict) -> dict:
        ours: dict[str, list] = {c: [] for c in self.codes}
        anchors: dict[str, list] = {c: [] for c in self.codes}
        for _ in range(self.a.repeat):
            for c in self.codes:
                ours[c].append(self.child(c, "tui_analysed", d["ids_run"]))
                anchors[c].append(self.ours(c, [PY, "-m", "magi_tui", "triage", "--json", d["ids_run"]]))
            self.sample_load()
        return {"ours": ours, "anchor": anchors, "anchor_name": "headless triage --json (same code)",
                "decide": "cpu", "goal": 2.0, "rss_goal_mb": 300, "rss_key": "peak_rss_mb"}

    @property
    def orjson_python(self) -> str:
        for py in (PY, self.a.toolong):
            if Path(py).exists() and subprocess.run([py, "-c", "import orjson"], capture_output=True).returncode == 0:
                return py
        raise SystemExit("no python with orjson: pip install orjson into the toolong venv")

    @property
    def tlparse(self) -> str:
        found = shutil.which("tlparse") or str(Path(PY).with_name("tlparse"))
        if not Path(found).exists():
            raise SystemExit("tlparse not found (pip install tlparse)")
        return found


# -- the table -------------------------------------------------------------------------------------
def summarise(name: str, row: dict, code: str) -> dict:
    ck, wk = row.get("cpu_key", "cpu_s"), row.get("wall_key", "wall_s")
    ours = row["ours"][code]
    anchor = row["anchor"][code] if isinstance(row["anchor"], dict) else row["anchor"]
    out: dict = {"row": name, "anchor_name": row["anchor_name"], "goal": row["goal"], "decide": row["decide"],
                 "ours_cpu_s": C.median(ours, ck), "ours_wall_s": C.median(ours, wk),
                 "ours_peak_rss_mb": C.median(ours, "peak_rss_mb"),
                 "all_ours_cpu_s": [round(r[ck], 3) for r in ours], "all_ours_wall_s": [round(r[wk], 3) for r in ours]}
    if anchor:
        ack = "first_cpu_s" if name == "first_screen" else "cpu_s"
        awk = "first_wall_s" if name == "first_screen" else "wall_s"
        out.update(anchor_cpu_s=C.median(anchor, ack), anchor_wall_s=C.median(anchor, awk),
                   anchor_peak_rss_mb=C.median(anchor, "peak_rss_mb"),
                   all_anchor_cpu_s=[round(r[ack], 3) for r in anchor],
                   all_anchor_wall_s=[round(r[awk], 3) for r in anchor])
        out["ratio_cpu"] = round(out["ours_cpu_s"] / out["anchor_cpu_s"], 2) if out["anchor_cpu_s"] else None
        out["ratio_wall"] = round(out["ours_wall_s"] / out["anchor_wall_s"], 2) if out["anchor_wall_s"] else None
    decide = row["decide"]
    if decide == "abs_wall":
        holds = out["ours_wall_s"] <= row["goal"] and all(r.get("key_moved") for r in ours)
        out["keys_moved_while_loading"] = [bool(r.get("key_moved") and r.get("loading_after_key")) for r in ours]
        out["key_s"] = C.median(ours, "key_s")
        out["events_at_first"] = C.median(ours, "events_at_first")
    elif anchor:
        holds = (out["ratio_cpu"] if decide == "cpu" else out["ratio_wall"]) <= row["goal"]
    else:  # --no-anchor: codes compared with each other only
        holds = None
    if "rss_goal_mb" in row:
        out["rss_goal_mb"] = row["rss_goal_mb"]
        holds = holds and out["ours_peak_rss_mb"] <= row["rss_goal_mb"]
    for k, extra in row.get("also", {}).items():
        out[f"{k}_cpu_s"] = C.median(extra, "cpu_s")
        out[f"ratio_cpu_vs_{k}"] = round(out["ours_cpu_s"] / out[f"{k}_cpu_s"], 2)
    if name == "fail_after_f":
        out["presses"] = [r["presses"] for r in ours]
    if ours and all("analysed_cpu_s" in r for r in ours):
        out.update(ours_analysed_cpu_s=C.median(ours, "analysed_cpu_s"),
                   ours_analysed_wall_s=C.median(ours, "analysed_wall_s"),
                   ours_loaded_peak_rss_mb=C.median(ours, "loaded_peak_rss_mb"),
                   all_ours_peak_rss_mb=[round(r["peak_rss_mb"]) for r in ours])
    timed_out = sum(1 for r in ours if r.get("timed_out"))
    if timed_out:  # a child past its limit measured nothing but the limit
        out["timed_out"] = f"{timed_out} of {len(ours)}"
        holds = False
    out["holds"] = None if holds is None else bool(holds)
    return out


def markdown(rows: list[dict]) -> str:
    lines = ["| row | ours CPU / wall | anchor CPU / wall | ratio CPU / wall | goal | holds? |",
             "|---|---|---|---|---|---|"]
    for r in rows:
        mem = f", {r['ours_peak_rss_mb']:.0f} MB" if r.get("rss_goal_mb") else ""
        if "ours_analysed_cpu_s" in r:
            mem += (f" (loaded: {r['ours_loaded_peak_rss_mb']:.0f} MB; with the panel's analysis: "
                    f"CPU {r['ours_analysed_cpu_s']:.3f} s)")
        ours = f"{r['ours_cpu_s']:.3f} s / {r['ours_wall_s']:.3f} s{mem}"
        if r["decide"] != "abs_wall" and r.get("anchor_cpu_s") is None:
            anchor, ratio = "(not measured: --no-anchor)", "—"
        elif r.get("anchor_cpu_s") is not None:
            anchor = f"{r['anchor_cpu_s']:.3f} s / {r['anchor_wall_s']:.3f} s ({r['anchor_name']})"
            ratio = f"{r['ratio_cpu']:.2f}× / {r['ratio_wall']:.2f}×"
        else:
            anchor = r["anchor_name"]
            ratio = (f"key moved in {r['key_s'] * 1000:.0f} ms, while loading: "
                     f"{sum(r['keys_moved_while_loading'])}/{len(r['keys_moved_while_loading'])}")
        goal = {"cpu": f"CPU ≤ {r['goal']}×", "wall": f"wall ≤ {r['goal']}×",
                "abs_wall": f"wall ≤ {r['goal']} s"}[r["decide"]]
        if r.get("rss_goal_mb"):
            goal += f", RSS ≤ {r['rss_goal_mb']} MB"
        if r.get("timed_out"):
            ours = f"**timed out** ({r['timed_out']}): {ours}"
        lines.append(f"| {r['row']} | {ours} | {anchor} | {ratio} | {goal} | {'—' if r['holds'] is None else 'yes' if r['holds'] else '**no**'} |")
    return "\n".join(lines)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--code", action="append", help="a checkout whose magi_tui is 'ours' (repeatable)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--quick", action="store_true", help="--mib 128 --compiles 20000 --repeat 2")
    ap.add_argument("--only", nargs="*", default=["1", "2", "3", "4", "5", "6"])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--mib", type=int, default=1024)
    ap.add_argument("--frames", type=int, default=0, help="row 3 on a TORCH_TRACE log of this many small "
                    "frames (synth.write_trace_log) instead of --mib of real records")
    ap.add_argument("--diff-lines", type=int, default=20_000)
    ap.add_argument("--compiles", type=int, default=100_000)
    ap.add_argument("--no-anchor", action="store_true", help="row 3 without tlparse (to compare --code "
                    "checkouts with each other: tlparse writes a folder per compile, minutes on a big log)")
    ap.add_argument("--timeout", type=float, default=300, help="seconds one of our processes may run")
    ap.add_argument("--toolong", default="/tmp/tl/bin/python",
                    help="a python with toolong (and orjson) installed: its own venv, it pins an older textual")
    ap.add_argument("--child", nargs="+", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        kind, *rest = args.child
        if kind == "data":
            print(json.dumps(child_data(*rest)))
            return
        C.use_code(args.code[0])
        child = {"tui": child_tui, "tui_analysed": lambda r, c: child_tui(r, c, analysed=True),
                 "first_keys": child_first_keys}[kind]
        print(json.dumps(child(rest[0], args.code[0])))
        return
    args.code = args.code or [str(ROOT)]
    if args.quick:
        args.mib, args.compiles, args.repeat = min(args.mib, 128), min(args.compiles, 20_000), min(args.repeat, 2)
    if {"1", "5"} & set(args.only) and not Path(args.toolong).exists():
        raise SystemExit(f"no toolong at {args.toolong}: python -m venv /tmp/tl && /tmp/tl/bin/pip install toolong "
                         "orjson")
    started = time.perf_counter()
    results: dict = {"date": datetime.now(timezone.utc).isoformat(timespec="seconds"), "python": sys.version.split()[0],
                     "codes": {}, "events": args.events, "mib": args.mib, "diff_lines": args.diff_lines,
                     "compiles": args.compiles, "frames": args.frames, "repeat": args.repeat, "load_before": C.load_average()}
    for c in args.code:
        head = subprocess.run(["git", "-C", c, "rev-parse", "--short", "HEAD"], capture_output=True, text=True)
        dirty = subprocess.run(["git", "-C", c, "status", "--porcelain", "--untracked-files=no", "--", "magi_tui",
                                "magi_format"], capture_output=True, text=True).stdout.strip()
        results["codes"][str(Path(c).resolve())] = head.stdout.strip() + (" (+ uncommitted changes)" if dirty else "")
    with tempfile.TemporaryDirectory(prefix="bench_goals_") as tmp:
        b = Bench(args, Path(tmp))
        spec = json.dumps({"only": args.only, "events": args.events, "mib": args.mib, "frames": args.frames,
                           "diff_lines": args.diff_lines, "compiles": args.compiles})
        data = C.whole_process([PY, str(HERE / "bench_goals.py"), "--child", "data", tmp, spec], cwd=ROOT,
                               ok=(0,))["child"]
        for c in b.codes:
            C.compile_code(c, b.pyc)
        raw: dict[str, dict] = {}
        steps: list[tuple[str, str, Callable[[dict], Any]]] = [("1", "first_screen", b.first_screen), ("2", "triage_json", b.triage_json),
                 ("3", "log_triage", b.log_triage), ("4", "diff_d", b.diff_d), ("5", "fail_after_f", b.fail_after_f),
                 ("6", "compile_ids", b.compile_ids)]
        for key, name, fn in steps:
            if key not in args.only:
                continue
            t = time.perf_counter()
            got = fn(data)
            if isinstance(got, tuple):
                raw[name], raw["log_first_screen"] = got
            else:
                raw[name] = got
            print(f"# {name}: {time.perf_counter() - t:.0f} s", file=sys.stderr, flush=True)
        results["load_during"] = [list(x) for x in b.load]
        results["rows"] = {code: [summarise(n, r, code) for n, r in raw.items()] for code in b.codes}
    results["load_after"] = C.load_average()
    results["seconds"] = round(time.perf_counter() - started)
    for code, rows in results["rows"].items():
        print(f"\n### ours = {code} @ {results['codes'][code]}\n")
        print(markdown(rows))
    loads = [x[0] for x in results["load_during"]]
    if loads:
        print(f"\nload average (1 min) during the run: {min(loads):.2f}–{max(loads):.2f}; took {results['seconds']} s")
    print("\n" + json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
