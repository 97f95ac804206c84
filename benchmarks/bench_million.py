"""A million events (issue #11 "Speed", issue #14 item 5 "Memory"): headless triage and the app's model
load on a 1M-event run, against an orjson loop over the same file, interleaved, each a fresh process.

    .venv/bin/python benchmarks/bench_million.py [--events 1000000] [--repeat 3] [--run RUN_DIR]

``--run``: an existing run dir (read only); otherwise one is written to a temp dir first
(``synth.write_synthetic_run(path, N, with_files=0)``, about 380 MB for 1M events).

Rows (CPU = user + system seconds of the whole process; peak RSS from ``wait4``'s ``ru_maxrss``):

* ``triage_json``: ``python -m magi_tui triage --json RUN`` (output to /dev/null). Goal: under 1 GB RSS.
* ``tui_model_load``: the model as the app's run screen loads it, without Textual (``RunScreen._load``:
  a first read of ``LOAD_FIRST_BYTES``, then reads of ``LOAD_READ_BYTES``, each folded in with the tree
  built and what was read frozen out of the GC, as ``RunScreen._ingest`` does).
* anchor ``orjson_loop``: ``orjson.loads`` of every line into a list (whole process).
* ``bare_imports``: an interpreter that imports what triage imports and reads nothing: the RSS the
  per-event figure is counted from (``bytes_per_event`` = (peak RSS - that) / events).

Prints one JSON object: medians, and ratios against the anchor measured in the same run.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

_ORJSON_LOOP = "import orjson,sys\nwith open(sys.argv[1],'rb') as fh:\n    objs=[orjson.loads(l) for l in fh]\n"
_BARE = "import magi_tui.cli, magi_tui.model.outputs.report\n"


def child_tui_load(run: str) -> None:
    """The run screen's load loop on the model alone (RunScreen._load / _ingest, Textual not driven)."""
    import gc

    from magi_tui.model.run import RunModel
    from magi_tui.ui.screens.run import LOAD_FIRST_BYTES, LOAD_READ_BYTES

    model = RunModel(run)
    reader = model.reader
    first = True
    reads = 0
    while True:
        before = reader.offset
        res = reader.read(LOAD_FIRST_BYTES if first else LOAD_READ_BYTES)
        model.ingest(res)
        gc.freeze()
        reads += 1
        first = False
        if reader.offset == before and not res.reset:
            break
    groups = sum(len(c.groups) for s in model.tree.sessions for c in s.compiles)
    print(json.dumps({"events": len(model.events), "reads": reads, "groups": groups}), file=sys.stderr)


def _whole_process(cmd: list[str]) -> dict:
    """CPU, wall and peak RSS of one child process (its output thrown away)."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    _pid, status, ru = os.wait4(proc.pid, 0)
    wall = time.perf_counter() - t0
    err = proc.stderr.read().decode(errors="replace") if proc.stderr else ""
    proc.stderr.close()
    code = os.waitstatus_to_exitcode(status)
    if code not in (0, 1):  # triage exits 1 on a failed run
        raise SystemExit(f"{cmd} exited {code}: {err[-2000:]}")
    return {"cpu_s": round(ru.ru_utime + ru.ru_stime, 3), "wall_s": round(wall, 3),
            "peak_rss_mb": round(ru.ru_maxrss / 1024, 1), "stderr": err.strip().splitlines()[-1:]}


def _med(rows: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=1_000_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--run", help="an existing run dir to read (default: write one to a temp dir)")
    ap.add_argument("--only", nargs="*", default=["triage", "tui"])
    ap.add_argument("--child", nargs=2, metavar=("KIND", "RUN"), help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        child_tui_load(args.child[1])
        return
    py = sys.executable
    with tempfile.TemporaryDirectory() as tmp:
        if args.run:
            run = Path(args.run)
        else:
            from synth import write_synthetic_run

            run = Path(tmp) / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
            t = time.perf_counter()
            write_synthetic_run(run, args.events, with_files=0)
            print(f"wrote {args.events} events in {time.perf_counter() - t:.1f}s", file=sys.stderr)
        timeline = run / "timeline_events" / "timeline.jsonl"
        with open(timeline, "rb") as fh:
            n_lines = sum(1 for _ in fh)
        cmds = {"orjson_loop": [py, "-c", _ORJSON_LOOP, str(timeline)],
                "bare_imports": [py, "-c", _BARE]}
        if "triage" in args.only:
            cmds["triage_json"] = [py, "-m", "magi_tui", "triage", "--json", str(run)]
        if "tui" in args.only:
            cmds["tui_model_load"] = [py, __file__, "--child", "tui", str(run)]
        rows: dict[str, list[dict]] = {k: [] for k in cmds}
        for _ in range(args.repeat):  # interleaved: ours, anchor, ours, anchor, ...
            for k, cmd in cmds.items():
                rows[k].append(_whole_process(cmd))
    anchor_cpu = _med(rows["orjson_loop"], "cpu_s")
    bare_rss = _med(rows["bare_imports"], "peak_rss_mb")
    out: dict = {"events": n_lines, "timeline_mb": round(timeline.stat().st_size / 1e6, 1) if timeline.exists() else None,
                 "repeat": args.repeat, "python": sys.version.split()[0]}
    for k, rs in rows.items():
        row = {"cpu_s": _med(rs, "cpu_s"), "wall_s": _med(rs, "wall_s"), "peak_rss_mb": _med(rs, "peak_rss_mb"),
               "all_cpu_s": [r["cpu_s"] for r in rs]}
        if k not in ("orjson_loop", "bare_imports"):
            row["ratio_cpu_vs_orjson_loop"] = round(row["cpu_s"] / anchor_cpu, 2)
            row["ratio_rss_vs_orjson_loop"] = round(row["peak_rss_mb"] / _med(rows["orjson_loop"], "peak_rss_mb"), 2)
        if k != "bare_imports":
            row["bytes_per_event"] = round((row["peak_rss_mb"] - bare_rss) * 2**20 / max(1, n_lines))
        if k == "tui_model_load" and rs[-1]["stderr"]:
            row["model"] = json.loads(rs[-1]["stderr"][0])
        out[k] = row
    if "triage_json" in out:
        out["triage_json"]["goal_rss_under_1gb"] = out["triage_json"]["peak_rss_mb"] < 1024
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
