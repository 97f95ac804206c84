"""Live tailing under load: a writer PROCESS appends realistic events at a fixed rate while the app
tails the run under ``App.run_test()``.

Events are the real cold-transformer timeline's lines (shared fixtures), repeated and re-indexed, each
stamped with ``timestamp = time.time()`` just before it is written (one ``write`` per line, like the
tracer), then its event folder with its files. Three latencies, from the event's timestamp to:
``read_ms`` - the moment ``RunModel.update()`` returned it (it is in ``screen.run.events``);
``latency_ms`` - the moment ``RunScreen.apply_update`` receives it (updates are coalesced to at most one
per ``live.APPLY_MIN_S``); ``applied_ms`` - the end of ``apply_update`` (tree, detail, title, triage
updated; the frame is painted right after). Also: events lost / duplicated, RSS growth, CPU while
tailing, idle CPU after the writer stops.

    .venv/bin/python benchmarks/bench_live.py                   # 100/s and 1000/s, 60 s each
    .venv/bin/python benchmarks/bench_live.py --seconds 10 --rates 1000

Prints one JSON object per rate (and a summary list at the end).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))
FIXTURE = (ROOT / "tests" / "fixtures" / "magi_depyf" / "transformer" / "magi_depyf" / "run_20261122_111900" /
           "model_1_TwoLayerTransformer_rank_0" / "timeline_events" / "timeline.jsonl")


# -- the writer process ------------------------------------------------------------------------
def template_lines() -> list[dict]:
    if FIXTURE.is_file():
        return [json.loads(line) for line in FIXTURE.read_text().splitlines() if line.strip()]
    out = []  # no fixtures: a plausible stand-in (a lifecycle pair and a point event)
    for lc in ("compile", "inductor"):
        out.append({"index": 0, "name": f"fullgraph_before_{lc}", "relative_time": "0.0ms", "files": [],
                    "attributes": {"scope": "fullgraph", "lifecycle_name": lc}, "datetime": "", "timestamp": 0})
        out.append({"index": 0, "name": f"fullgraph_after_{lc}", "relative_time": "0.0ms", "files": [],
                    "attributes": {"scope": "fullgraph", "lifecycle_name": lc, "duration_ms": 1.0},
                    "datetime": "", "timestamp": 0})
    return out


def writer(path: str, rate: float, seconds: float) -> None:
    lines = template_lines()
    total = int(rate * seconds)
    fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
    files_root = os.path.join(os.path.dirname(path), "files")
    t0 = time.time()
    start = time.perf_counter()
    for i in range(total):
        due = start + i / rate
        delay = due - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        obj = dict(lines[i % len(lines)])
        now = time.time()
        obj["index"] = i
        obj["relative_time"] = f"{(now - t0) * 1000:.1f}ms"
        obj["datetime"] = datetime.fromtimestamp(now).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
        obj["timestamp"] = now
        os.write(fd, (json.dumps(obj, ensure_ascii=False) + "\n").encode())
        if obj.get("files"):  # then its folder, as the tracer does (FORMAT.md §4)
            folder = os.path.join(files_root, f"{i:04d}_{obj['name']}")
            sub = (obj.get("attributes") or {}).get("subgraph")
            if sub:
                folder = os.path.join(folder, sub)
            os.makedirs(folder, exist_ok=True)
            for name in obj["files"]:
                with open(os.path.join(folder, name), "w") as fh:
                    fh.write(f"# {name} of event {i}\n")
    os.close(fd)
    print(json.dumps({"written": total, "seconds": time.perf_counter() - start}), flush=True)


# -- the app side ------------------------------------------------------------------------------
def rss_mb() -> float:
    with open("/proc/self/status") as fh:
        for line in fh:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


def cpu_s() -> float:
    t = os.times()
    return t.user + t.system


def pct(values: list[float], q: float) -> float | None:
    if not values:
        return None
    s = sorted(values)
    return s[min(len(s) - 1, int(q * len(s)))]


async def bench(rate: float, seconds: float, idle_seconds: float, follow: bool) -> dict:
    from magi_tui.ui.app import MagiApp
    from magi_tui.ui.screens.run import RunScreen

    tmp = Path(tempfile.mkdtemp(prefix="bench_live_"))
    run = tmp / "magi_depyf" / "run_20261122_120000" / "model_0_bench_rank_0"
    tl = run / "timeline_events" / "timeline.jsonl"
    tl.parent.mkdir(parents=True)
    tl.touch()
    expected = int(rate * seconds)
    seen: dict[tuple[int, int], int] = {}
    received: list[float] = []
    read: list[float] = []
    applied: list[float] = []
    updates = 0

    app = MagiApp(run, live=True)
    async with app.run_test(size=(120, 40)) as pilot:
        end = time.monotonic() + 10
        while not (isinstance(app.screen, RunScreen) and app.screen.loaded) and time.monotonic() < end:
            await pilot.pause(0.02)
        screen = app.screen
        assert isinstance(screen, RunScreen)
        if not follow:
            screen.action_toggle_follow()
        original = screen.apply_update

        def hooked(up, **kw):
            nonlocal updates
            t_in = time.time()
            original(up, **kw)
            t_out = time.time()
            updates += 1
            if up.reset:
                print(f"warning: reset {up.reset}", file=sys.stderr)
            for ev in up.events:
                key = (ev.session, ev.index)
                seen[key] = seen.get(key, 0) + 1
                if ev.timestamp is not None:
                    received.append((t_in - ev.timestamp) * 1000)
                    applied.append((t_out - ev.timestamp) * 1000)

        screen.apply_update = hooked
        model_update = screen.run.update

        def hooked_read(*a, **kw):  # the moment events are in screen.run.events
            up = model_update(*a, **kw)
            t = time.time()
            for ev in up.events:
                if ev.timestamp is not None:
                    read.append((t - ev.timestamp) * 1000)
            return up

        screen.run.update = hooked_read
        await pilot.pause(0.3)  # the watcher is up
        rss0 = rss_mb()
        cpu0 = cpu_s()
        t_start = time.perf_counter()
        proc = await asyncio.create_subprocess_exec(
            sys.executable, __file__, "--writer", str(tl), str(rate), str(seconds),
            stdout=asyncio.subprocess.PIPE)
        while proc.returncode is None:
            try:
                await asyncio.wait_for(proc.wait(), 0.1)
            except asyncio.TimeoutError:
                pass
        out = (await proc.stdout.read()).decode()
        drain_end = time.monotonic() + 5
        while sum(seen.values()) < expected and time.monotonic() < drain_end:
            await pilot.pause(0.02)
        await pilot.pause(0.5)
        busy_cpu = cpu_s() - cpu0
        busy_s = time.perf_counter() - t_start
        rss1 = rss_mb()
        # idle: nothing written any more; the watcher, the poll and the 1 s tick keep running
        cpu_i = cpu_s()
        t_i = time.perf_counter()
        await asyncio.sleep(idle_seconds)
        idle_cpu = (cpu_s() - cpu_i) / (time.perf_counter() - t_i) * 100
        n_events = len(screen.run.events)
    lost = expected - len(seen)
    dup = sum(c - 1 for c in seen.values() if c > 1)
    return {
        "rate_per_s": rate, "seconds": seconds, "follow": follow, "expected": expected,
        "received": sum(seen.values()), "in_model": n_events, "lost": lost, "duplicated": dup,
        "updates": updates, "events_per_update": round(sum(seen.values()) / max(1, updates), 1),
        "read_ms": {"p50": round(pct(read, 0.5) or 0, 1), "p99": round(pct(read, 0.99) or 0, 1),
                    "max": round(max(read, default=0), 1)},
        "latency_ms": {"p50": round(pct(received, 0.5) or 0, 1), "p99": round(pct(received, 0.99) or 0, 1),
                       "max": round(max(received, default=0), 1)},
        "applied_ms": {"p50": round(pct(applied, 0.5) or 0, 1), "p99": round(pct(applied, 0.99) or 0, 1),
                       "max": round(max(applied, default=0), 1)},
        "rss_mb": {"start": round(rss0, 1), "end": round(rss1, 1), "growth": round(rss1 - rss0, 1),
                   "per_event_bytes": round((rss1 - rss0) * 1024 * 1024 / max(1, n_events))},
        "cpu_busy_pct": round(busy_cpu / busy_s * 100, 1),
        "cpu_idle_pct": round(idle_cpu, 2), "idle_seconds": idle_seconds,
        "writer": json.loads(out.strip().splitlines()[-1]) if out.strip() else None,
    }


def main() -> None:
    if len(sys.argv) > 1 and sys.argv[1] == "--writer":
        writer(sys.argv[2], float(sys.argv[3]), float(sys.argv[4]))
        return
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--rates", type=float, nargs="+", default=[100, 1000])
    p.add_argument("--seconds", type=float, default=60)
    p.add_argument("--idle-seconds", type=float, default=10)
    p.add_argument("--no-follow", action="store_true", help="follow mode off (it is on by default live)")
    args = p.parse_args()
    results = []
    for rate in args.rates:
        r = asyncio.run(bench(rate, args.seconds, args.idle_seconds, follow=not args.no_follow))
        print(json.dumps(r), flush=True)
        results.append(r)
    goal = all(r["lost"] == 0 and r["duplicated"] == 0 and r["latency_ms"]["p50"] <= 30
               and r["latency_ms"]["p99"] <= 100 for r in results)
    print(json.dumps({"summary": [{k: r[k] for k in ("rate_per_s", "lost", "duplicated", "latency_ms",
                                                     "rss_mb", "cpu_idle_pct")} for r in results],
                      "goal_met": goal}, indent=1))


if __name__ == "__main__":
    main()
