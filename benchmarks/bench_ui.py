"""How fast the explorer opens a big run: time to first screen, full load, and peak RSS.

Writes a synthetic run with ``benchmarks/synth.py`` (realistic vocabulary and nesting), then, in a
fresh process per measurement, drives the real app under ``App.run_test()`` and prints JSON:

* ``first_screen_s``: App construction -> the event tree has painted a row with data;
* ``loaded_s``: -> the whole timeline has been read into the tree;
* ``max_ui_stall_ms``: the longest the event loop was busy while loading (what a key press waits);
* ``max_ui_stall_after_load_ms``: the same over the ``--after`` seconds after loading (the triage
  panel's analysis of the whole run, label refreshes, the first full paint);
* ``peak_rss_mb`` of the process, and ``rss_growth_mb`` over the imports' baseline.

Usage: python benchmarks/bench_ui.py [--events 100000] [--size 120x40] [--after 2] [--run EXISTING_RUN_DIR]
Goals (issue 4): first screen <= 0.3 s, peak RSS <= 150 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
sys.path.insert(0, str(HERE))


def _status_mb(key: str) -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    return 0.0


def rss_mb() -> float:
    return _status_mb("VmRSS")


def measure(run_dir: str, size: str, after: float = 2.0) -> dict:
    from textual.strip import Strip

    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen
    from magi_tui.ui.widgets.event_tree import EventTree

    w, h = (int(x) for x in size.split("x"))
    base_rss = rss_mb()
    first_paint: list[float] = []
    orig = EventTree.render_line

    def probe(self, y: int) -> Strip:
        strip = orig(self, y)
        if not first_paint and self.root.children and strip.text.strip():
            first_paint.append(time.perf_counter())
        return strip

    EventTree.render_line = probe
    out: dict = {}

    async def main() -> None:
        t0 = time.perf_counter()
        app = MagiApp(Path(run_dir))
        async with app.run_test(size=(w, h)) as pilot:
            stalls: list[float] = []

            async def lag_probe() -> None:
                while True:
                    t = time.perf_counter()
                    await asyncio.sleep(0.005)
                    stalls.append((time.perf_counter() - t - 0.005) * 1000)

            probe_task = asyncio.create_task(lag_probe())
            while not (isinstance(app.screen, RunScreen) and app.screen.loaded):
                await asyncio.sleep(0.005)
            t_loaded = time.perf_counter()
            n_loading = len(stalls)
            await asyncio.sleep(after)
            probe_task.cancel()
            await pilot.pause()
            later = sorted(stalls[n_loading:])
            stalls = sorted(stalls[:n_loading])
            out.update({
                "events": len(app.screen.run.events),
                "first_screen_s": round(first_paint[0] - t0, 3) if first_paint else None,
                "loaded_s": round(t_loaded - t0, 3),
                "max_ui_stall_ms": round(stalls[-1], 1) if stalls else None,
                "p50_ui_stall_ms": round(stalls[len(stalls) // 2], 1) if stalls else None,
                "max_ui_stall_after_load_ms": round(later[-1], 1) if later else None,
            })

    asyncio.run(main())
    # VmHWM, not ru_maxrss: on Linux ru_maxrss survives exec, so a child would report the parent's
    # peak (the parent generated the 100k-event file)
    out["peak_rss_mb"] = round(_status_mb("VmHWM"), 1)
    out["rss_growth_mb"] = round(rss_mb() - base_rss, 1)
    return out


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--size", default="120x40")
    ap.add_argument("--after", type=float, default=2.0, help="seconds to keep probing after the load")
    ap.add_argument("--run", help="measure this existing run instead of a synthetic one")
    ap.add_argument("--measure", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        print(json.dumps(measure(args.measure, args.size, args.after)))
        return
    if args.run:
        proc = subprocess.run([sys.executable, __file__, "--measure", args.run, "--size", args.size,
                               "--after", str(args.after)], capture_output=True, text=True, check=False)
        print(proc.stdout.strip().splitlines()[-1] if proc.returncode == 0 else proc.stderr)
        return
    from synth import write_synthetic_run

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "model_1_Synthetic_rank_0"
        t = time.perf_counter()
        write_synthetic_run(run, args.events)
        gen_s = time.perf_counter() - t
        proc = subprocess.run([sys.executable, __file__, "--measure", str(run), "--size", args.size,
                               "--after", str(args.after)],
                              capture_output=True, text=True, check=False)
        if proc.returncode != 0:
            print(proc.stderr, file=sys.stderr)
            raise SystemExit(proc.returncode)
        res = json.loads(proc.stdout.strip().splitlines()[-1])
        size_mb = (run / "timeline_events" / "timeline.jsonl").stat().st_size / 1e6
    res.update({"requested_events": args.events, "timeline_mb": round(size_mb, 1),
                "generate_s": round(gen_s, 2),
                "goal_first_screen_s": 0.3, "goal_peak_rss_mb": 150,
                "first_screen_ok": res.get("first_screen_s") is not None and res["first_screen_s"] <= 0.3,
                "rss_ok": res["peak_rss_mb"] <= 150})
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
