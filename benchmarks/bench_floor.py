"""Issue #21: why ``bench_speed.py``'s ``tui_load`` row (the app, a 100k-event run wholly loaded, against
toolong) cannot reach 1.0 while every event is read before the run counts as loaded. Measured, not argued:

    .venv/bin/python benchmarks/bench_floor.py [--events 100000] [--repeat 3] [--toolong /tmp/toolong_venv/bin/python]

Each in a fresh process, interleaved, medians of ``--repeat``; CPU = user + system of the whole process,
as ``bench_speed.py`` measures its rows (same children, same bytecode compiled beforehand):

* ``toolong``: its launch on a 100-line file and on the 100k-line file (toolong indexes newlines and parses a
  line only when it is shown, so its cost is flat: the two are within noise).
* ``ours_fixed``: our app on a 100-event run, start to loaded (interpreter, Textual, the screens, the first
  paints: what does not grow with the run); ``ours``: on the 100k-event run.
* ``budget_s`` = toolong's 100k launch - ``ours_fixed``: what a ratio of 1.0 leaves for reading, folding and
  showing every event.
* ``floor_s``: the least a Python reader of every line pays before anything is made of the lines:
  splitting the file's bytes into lines and msgspec (C) decoding each line into a struct of only the
  fields the first screen needs to place and mark every event (name, index, time; compile id, lifecycle,
  subgraph and graph index, duration, cache results), in a fresh process, CPU of those two steps alone.
  ``floor_name_only_s``: the same with the name alone (no tree can be built from it: a lower bound).
  ``group_by_compile_id_s``: the least fold a tree of compiles needs, after that decode: one pass over the
  decoded lines counting them per compile id (a dict look-up each): compare it with ``left_per_event_us``.

``floor_s`` near or above ``budget_s`` means no design that reads every event before the run is "loaded"
meets the row: what is left is what making Events, pairing, the tree, the triage and the paint may cost. Also printed: the memory toolong's 100k
lines add (the file's pages it maps) against what our 100k events add, per line / event.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))

_FLOOR = r'''
import json, sys, time
import msgspec
class Name(msgspec.Struct, gc=False):
    name: str
class Attrs(msgspec.Struct, gc=False):
    compile_id: str | None = None
    lifecycle_name: str | None = None
    subgraph_index: int | None = None
    graph_index: int | None = None
    duration_ms: float | None = None
    load_result: str | None = None
    store_result: str | None = None
class Tree(msgspec.Struct, gc=False):
    name: str
    index: int | None = None
    timestamp: float | None = None
    attributes: Attrs | None = None
with open(sys.argv[1], "rb") as fh:
    data = fh.read()
out = {}
for key, struct in (("name_only", Name), ("tree_fields", Tree)):
    decode = msgspec.json.Decoder(struct).decode
    t = time.process_time()
    lines = data.split(b"\n")
    lines.pop()
    made = [decode(line) for line in lines]
    out[key] = time.process_time() - t
    del lines
if True:  # the least fold a tree of compiles needs: each event counted under its compile id
    t = time.process_time()
    groups = {}
    for ev in made:
        a = ev.attributes
        cid = a.compile_id if a is not None else None
        groups[cid] = groups.get(cid, 0) + 1
    out["group_by_compile_id"] = time.process_time() - t
print(json.dumps(out))
'''


def main() -> None:
    from bench_speed import _TOOLONG_CHILD, _installed_bytecode, _med, _run_child
    from synth import write_synthetic_run

    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--events", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--toolong", default="/tmp/toolong_venv/bin/python")
    args = ap.parse_args()
    if not Path(args.toolong).exists():
        sys.exit(f"no toolong at {args.toolong}: pip install toolong into its own venv (it pins textual<0.59)")
    rows: dict[str, list[dict]] = {k: [] for k in ("toolong_small", "toolong", "ours_fixed", "ours", "floor")}
    with tempfile.TemporaryDirectory(prefix="bench_floor_") as tmp:
        runs = {}
        for key, n in (("small", 100), ("big", args.events)):
            run = Path(tmp) / key / "magi_depyf" / "run_20261122_111900" / "model_1_Synthetic_rank_0"
            write_synthetic_run(run, n)
            timeline = run / "timeline_events" / "timeline.jsonl"
            runs[key] = (run, timeline, sum(1 for _ in open(timeline, "rb")))
        tl_script = Path(tmp) / "toolong_child.py"
        tl_script.write_text(_TOOLONG_CHILD)
        floor_script = Path(tmp) / "floor.py"
        floor_script.write_text(_FLOOR)
        child = str(HERE / "bench_speed.py")
        with _installed_bytecode(Path(tmp) / "pyc"):
            for _ in range(args.repeat):
                for key, size in (("ours_fixed", "small"), ("ours", "big")):
                    rows[key].append(_run_child([child, "--child", "tui", str(runs[size][0])]))
                for key, size in (("toolong_small", "small"), ("toolong", "big")):
                    _, timeline, n = runs[size]
                    rows[key].append(_run_child([str(tl_script), str(timeline), str(n)], python=args.toolong))
                rows["floor"].append(_run_child([str(floor_script), str(runs["big"][1])]))
    med = {k: {m: _med(v, m) for m in ("cpu_s", "peak_rss_mb", "name_only", "tree_fields", "group_by_compile_id")}
           for k, v in rows.items()}
    budget = med["toolong"]["cpu_s"] - med["ours_fixed"]["cpu_s"]
    floor = med["floor"]["tree_fields"]
    n = args.events
    out = {
        "events": n, "repeat": args.repeat,
        "cpu_s": {k: med[k]["cpu_s"] for k in ("toolong_small", "toolong", "ours_fixed", "ours")},
        "budget_s": round(budget, 3),
        "floor_s": floor,
        "floor_name_only_s": med["floor"]["name_only"],
        "left_per_event_us": round((budget - floor) / n * 1e6, 2),
        "group_by_compile_id_s": med["floor"]["group_by_compile_id"],
        "group_by_compile_id_per_event_us": round(med["floor"]["group_by_compile_id"] / n * 1e6, 2),
        "floor_over_budget": round(floor / budget, 2) if budget > 0 else None,
        "tui_load_ratio": round(med["ours"]["cpu_s"] / med["toolong"]["cpu_s"], 2),
        "peak_rss_mb": {k: med[k]["peak_rss_mb"] for k in ("toolong_small", "toolong", "ours_fixed", "ours")},
        "bytes_per_line_toolong": round((med["toolong"]["peak_rss_mb"] - med["toolong_small"]["peak_rss_mb"])
                                        * 2**20 / n),
        "bytes_per_event_ours": round((med["ours"]["peak_rss_mb"] - med["ours_fixed"]["peak_rss_mb"]) * 2**20 / n),
        "all": {k: [round(r.get("cpu_s", r.get("tree_fields", 0)), 3) for r in v] for k, v in rows.items()},
    }
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
