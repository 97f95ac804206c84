"""Load benchmark for the run model (issue 2): a synthetic 100k-event run, loaded by ``RunModel``
versus plain ``json.loads`` of every line, each in a fresh subprocess so peak RSS is honest.

    .venv/bin/python benchmarks/bench_load.py [--events 100000] [--repeat 3]

Prints JSON: ``model_load_s`` (``RunModel(path).load()``, the headless load: read, parse, pair, triage;
no tree, which only a view builds: ``benchmarks/bench_million.py`` times the app's way),
``json_loads_s`` (open, read lines, ``json.loads`` each), ``ratio`` (model / plain), the peak RSS of
each process (``resource.getrusage(RUSAGE_SELF).ru_maxrss``) and of a bare interpreter with the same
imports, and whether the goals hold: ratio <= 3, model peak RSS <= 150 MB. Times are the best of
``--repeat`` fresh processes.
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

GOAL_RATIO = 3.0
GOAL_RSS_MB = 150.0


def _rss_mb() -> float:
    kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return kb / 1024 if sys.platform != "darwin" else kb / 2**20  # Linux: KiB, macOS: bytes


def _hwm_mb() -> float | None:
    """Linux's own high-water mark of this process image (VmHWM), a cross-check of ru_maxrss."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return None


def measure(kind: str, run: Path) -> dict:
    """Runs in the child process."""
    from magi_tui.model import RunModel  # imported before timing in every kind, so RSS baselines match

    timeline = run / "timeline_events" / "timeline.jsonl"
    base = _rss_mb()
    if kind == "baseline":
        return {"rss_mb": base, "hwm_mb": _hwm_mb()}
    t = time.perf_counter()
    if kind == "plain":
        loads = json.loads
        with open(timeline, "rb") as fh:
            objs = [loads(line) for line in fh]
        n = len(objs)
    else:
        m = RunModel(run).load()
        n = len(m.events)
        extra = {"status": m.status, "failures": len(m.triage.failures),
                 "recovered": sum(f.recovered for f in m.triage.failures), "spans_open": len(m.open_spans)}
    elapsed = time.perf_counter() - t
    out = {"seconds": elapsed, "events": n, "rss_mb": _rss_mb(), "rss_before_mb": base, "hwm_mb": _hwm_mb()}
    if kind == "model":
        out.update(extra)
    return out


def _child(kind: str, run: Path, *extra: str) -> dict:
    # NB on Linux ru_maxrss survives fork+exec: a child's figure is at least its parent's RSS at the
    # fork. So this driver stays small (the run is generated in a child too) and never holds the data.
    proc = subprocess.run([sys.executable, __file__, "--measure", kind, str(run), *extra],
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        sys.stderr.write(proc.stderr)
        raise SystemExit(proc.returncode)
    return json.loads(proc.stdout.strip().splitlines()[-1])


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--keep", help="write the run here and keep it (default: a temp dir)")
    ap.add_argument("--measure", nargs="+", metavar="ARG", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.measure:
        kind, run = args.measure[0], Path(args.measure[1])
        if kind == "generate":
            from synth import write_synthetic_run

            t = time.perf_counter()
            write_synthetic_run(run, int(args.measure[2]))
            print(json.dumps({"seconds": time.perf_counter() - t}))
        else:
            print(json.dumps(measure(kind, run)))
        return

    with tempfile.TemporaryDirectory() as tmp:
        run = Path(args.keep) if args.keep else Path(tmp) / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
        gen_s = _child("generate", run, str(args.events))["seconds"]
        size_mb = (run / "timeline_events" / "timeline.jsonl").stat().st_size / 1e6
        base = _child("baseline", run)
        plain = [_child("plain", run) for _ in range(args.repeat)]
        model = [_child("model", run) for _ in range(args.repeat)]
    best_plain = min(plain, key=lambda r: r["seconds"])
    best_model = min(model, key=lambda r: r["seconds"])
    ratio = best_model["seconds"] / best_plain["seconds"]
    peak = max(r["rss_mb"] for r in model)
    res = {
        "events": best_model["events"],
        "timeline_mb": round(size_mb, 1),
        "generate_s": round(gen_s, 2),
        "model_load_s": round(best_model["seconds"], 3),
        "json_loads_s": round(best_plain["seconds"], 3),
        "ratio": round(ratio, 2),
        "model_peak_rss_mb": round(peak, 1),
        "json_loads_peak_rss_mb": round(max(r["rss_mb"] for r in plain), 1),
        "model_peak_vmhwm_mb": max((r["hwm_mb"] or 0) for r in model) or None,
        "interpreter_rss_mb": round(base["rss_mb"], 1),
        "driver_rss_mb": round(_rss_mb(), 1),
        "model_status": best_model["status"],
        "model_failures": best_model["failures"],
        "model_recovered": best_model["recovered"],
        "repeat": args.repeat,
        "all_model_load_s": [round(r["seconds"], 3) for r in model],
        "all_json_loads_s": [round(r["seconds"], 3) for r in plain],
        "goal_ratio": GOAL_RATIO,
        "goal_peak_rss_mb": GOAL_RSS_MB,
        "ratio_ok": ratio <= GOAL_RATIO,
        "rss_ok": peak <= GOAL_RSS_MB,
        "python": sys.version.split()[0],
    }
    print(json.dumps(res, indent=2))


if __name__ == "__main__":
    main()
