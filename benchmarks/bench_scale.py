"""Issue #21 "linear everywhere": many compile ids and many frames, the app against headless triage.

    .venv/bin/python benchmarks/bench_scale.py [--frames 100000] [--compiles 100000] [--repeat 1]
                                               [--only log run] [--timeout 600]

Two inputs, written to a temp dir first (``synth.py``):

* ``log``: a TORCH_TRACE log of ``--frames`` frames, each compiled once (``write_trace_log``: the
  ``dynamo_start`` / ``dynamo_output_graph`` every 10th frame / ``compilation_metrics`` records torch 2.13
  writes; ~690 bytes and 4 events per frame) — a long-running service that recompiles for dynamic
  shapes, or a fuzz harness, writes such logs.
* ``run``: a run directory with ``--compiles`` compile ids: the events the TORCH_TRACE reader makes of
  such a log, as the tracer writes them (``write_run_from_log``; 4 events per compile id).

Per input, each a fresh process, interleaved (triage, app, bare, triage, app, bare, ...), medians of
``--repeat``; CPU = user + system seconds of the whole process, RSS = peak (``wait4``):

* ``triage_json``: ``python -m magi_tui triage --json INPUT`` (output to /dev/null) — the anchor.
* ``tui_load``: ``MagiApp(INPUT)`` under ``run_test(120x40)`` from interpreter start to
  ``RunScreen.loaded`` (``bench_speed.child_tui``: everything read, folded in, the tree on screen).
* ``bare_imports``: an interpreter that imports what triage imports and reads nothing;
  ``bytes_per_frame`` = (peak RSS - that) / frames.

``--only commands``: every headless command on a log of ``--frames`` frames (``check``, ``metrics``,
``runs``, ``compare`` against a copy, ``ranks`` of the log and the copy as two ranks), CPU and peak RSS
against ``triage --json`` in the same run, and peak RSS per frame read (the interpreter's ~26 MB included).

Goals (issue #21): ``tui_load`` <= 2x ``triage_json``; on the 100k-frame log headless <= 5 s and
<= 300 MB, <= 3 KB per frame. The machine is shared (2 cores): read ratios measured in the same run,
not absolute seconds. A child that runs past ``--timeout`` is reported as such (``timed_out``).
Prints one JSON object.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(ROOT))
from _common import whole_process  # noqa: E402

_BARE = "import magi_tui.cli, magi_tui.model.outputs.report, magi_tui.model.sources.torchtrace.reader, magi_format.torch_mapping\n"


def _whole_process(cmd: list[str], timeout: float, ok: tuple[int, ...] = (0, 1)) -> dict:
    """CPU, wall and peak RSS of one child process, run from this checkout (``_common.whole_process``);
    ``ok``: the exit codes that are a measurement (triage exits 1 on a failed run)."""
    try:
        row = whole_process(cmd, cwd=ROOT, timeout=timeout, ok=ok)
    except RuntimeError as e:
        raise SystemExit(str(e)) from None
    return {k: round(v, 3 if k != "peak_rss_mb" else 1) if isinstance(v, float) else v for k, v in row.items()}


def _in_child(fn: str, *args: object) -> Path:
    """``synth.<fn>(*args)`` (strings; a number as int) in a child process: a child's peak RSS (``wait4``)
    starts from its parent's at fork, so this process stays small while it writes the inputs. Returns
    the path written (the last path argument)."""
    code = (f"import sys; sys.path[:0] = [{str(HERE)!r}, {str(ROOT)!r}]; import synth; "
            f"synth.{fn}(*[int(a) if a.isdigit() else a for a in sys.argv[1:]])")
    subprocess.run([sys.executable, "-c", code, *map(str, args)], check=True, cwd=ROOT)
    return Path(str([a for a in args if isinstance(a, Path)][-1]))


def _med(rows: list[dict], key: str) -> float:
    return round(statistics.median(r[key] for r in rows), 3)


def measure(target: Path, frames: int, repeat: int, timeout: float) -> dict:
    py = sys.executable
    cmds = {"triage_json": [py, "-m", "magi_tui", "triage", "--json", str(target)],
            "tui_load": [py, str(HERE / "bench_speed.py"), "--child", "tui", str(target)],
            "bare_imports": [py, "-c", _BARE]}
    rows: dict[str, list[dict]] = {k: [] for k in cmds}
    for _ in range(repeat):  # interleaved
        for k, cmd in cmds.items():
            # the bare interpreter must import everything: one that failed an import is no baseline
            rows[k].append(_whole_process(cmd, timeout, (0,) if k == "bare_imports" else (0, 1)))
    bare = _med(rows["bare_imports"], "peak_rss_mb")
    out: dict = {}
    for k, rs in rows.items():
        row = {"cpu_s": _med(rs, "cpu_s"), "wall_s": _med(rs, "wall_s"), "peak_rss_mb": _med(rs, "peak_rss_mb"),
               "all_cpu_s": [r["cpu_s"] for r in rs]}
        if any(r.get("timed_out") for r in rs):
            row["timed_out"] = f"{sum(1 for r in rs if r.get('timed_out'))} of {len(rs)} after {timeout:.0f}s"
        if k != "bare_imports":
            row["bytes_per_frame"] = round((row["peak_rss_mb"] - bare) * 2**20 / max(1, frames))
        if rs[-1].get("child"):
            row["events"] = rs[-1]["child"].get("events")
        out[k] = row
    anchor = out["triage_json"]
    out["tui_load"]["ratio_cpu_vs_triage"] = round(out["tui_load"]["cpu_s"] / anchor["cpu_s"], 2)
    out["tui_load"]["ratio_wall_vs_triage"] = round(out["tui_load"]["wall_s"] / anchor["wall_s"], 2)
    out["tui_load"]["ratio_rss_vs_triage"] = round(out["tui_load"]["peak_rss_mb"] / anchor["peak_rss_mb"], 2)
    return out


def measure_commands(log: Path, frames: int, repeat: int, timeout: float) -> dict:
    """Every headless command on the same long log, against ``triage --json`` in the same run: ``check``,
    ``metrics``, ``runs``, ``compare`` (the log against a copy of itself) and ``ranks`` (the log and the copy
    as ranks 0 and 1 of one job). Each streams (issue #21: memory follows the answer, not the run)."""
    py = sys.executable
    job = log.parent / "job"
    job.mkdir(exist_ok=True)
    r0, r1 = job / "dedicated_log_torch_trace_rank_0_bench.log", job / "dedicated_log_torch_trace_rank_1_bench.log"
    for dst in (r0, r1):  # copies (two files, as two ranks write them)
        if not dst.exists():
            shutil.copyfile(log, dst)
    cmds = {"triage_json": ["triage", "--json", str(r0)], "check_json": ["check", "--json", str(r0)],
            "metrics_json": ["metrics", "--json", str(r0)], "runs_json": ["runs", "--json", str(r0)],
            "compare_json": ["compare", "--json", str(r0), str(r1)], "ranks_json": ["ranks", "--json", str(job)]}
    rows: dict[str, list[dict]] = {k: [] for k in cmds}
    for _ in range(repeat):  # interleaved
        for k, args in cmds.items():
            rows[k].append(_whole_process([py, "-m", "magi_tui", *args], timeout, (0, 1)))
    out: dict = {}
    anchor = _med(rows["triage_json"], "cpu_s")
    for k, rs in rows.items():
        row = {"cpu_s": _med(rs, "cpu_s"), "wall_s": _med(rs, "wall_s"), "peak_rss_mb": _med(rs, "peak_rss_mb")}
        if any(r.get("timed_out") for r in rs):
            row["timed_out"] = f"{sum(1 for r in rs if r.get('timed_out'))} of {len(rs)} after {timeout:.0f}s"
        sides = 2 if k in ("compare_json", "ranks_json") else 1  # two logs read
        row["ratio_cpu_vs_triage"] = round(row["cpu_s"] / anchor, 2)
        row["kb_per_frame_read"] = round(row["peak_rss_mb"] * 1024 / (frames * sides), 2)
        out[k] = row
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--frames", type=int, default=100_000)
    ap.add_argument("--compiles", type=int, default=100_000)
    ap.add_argument("--repeat", type=int, default=1)
    ap.add_argument("--only", nargs="*", default=["log", "run"], help="log, run, commands (every headless "
                    "command on the log of --frames frames)")
    ap.add_argument("--timeout", type=float, default=600)
    args = ap.parse_args()
    results: dict = {"repeat": args.repeat, "python": sys.version.split()[0]}
    with tempfile.TemporaryDirectory(prefix="bench_scale_") as tmp:
        if "log" in args.only:
            log = _in_child("write_trace_log", Path(tmp) / "log" / "dedicated_log_torch_trace_rank_0_bench.log",
                            args.frames)
            res = measure(log, args.frames, args.repeat, args.timeout)
            res["frames"] = args.frames
            res["log_mb"] = round(log.stat().st_size / 1e6, 1)
            tri = res["triage_json"]
            res["goals"] = {"headless_le_5s": tri["cpu_s"] <= 5, "headless_le_300mb": tri["peak_rss_mb"] <= 300,
                            "le_3kb_per_frame": tri["bytes_per_frame"] <= 3072,
                            "app_le_2x_headless": res["tui_load"]["ratio_cpu_vs_triage"] <= 2}
            results["log_frames"] = res
        if "commands" in args.only:
            log = _in_child("write_trace_log", Path(tmp) / "cmds" / "dedicated_log_torch_trace_rank_0_bench.log",
                            args.frames)
            res = measure_commands(log, args.frames, args.repeat, args.timeout)
            res["frames"] = args.frames
            results["headless_commands"] = res
        if "run" in args.only:
            log = _in_child("write_trace_log", Path(tmp) / "src" / "dedicated_log_torch_trace_rank_0_src.log",
                            args.compiles)
            run = _in_child("write_run_from_log", log,
                            Path(tmp) / "magi_depyf" / "run_20261124_000000" / "model_1_Fuzz_rank_0")
            log.unlink()
            res = measure(run, args.compiles, args.repeat, args.timeout)
            res["compile_ids"] = args.compiles
            res["goals"] = {"app_le_2x_headless": res["tui_load"]["ratio_cpu_vs_triage"] <= 2}
            results["run_compile_ids"] = res
    print(json.dumps(results, indent=1))


if __name__ == "__main__":
    main()
