"""``magi-tui index ROOT… -o INDEX`` and ``magi-tui history INDEX …``: the history of many runs
(magi_tui/history, docs/HISTORY.md), and ``check --history INDEX``'s gate against it. Kept out of
``cli.py``, which stays the list of commands.

Exit codes (docs/HEADLESS.md): ``index`` 0 written (damaged runs are indexed as ``error`` rows and listed
on stderr), 2 no run found or the index cannot be written; ``history`` 0 answered (an empty answer too), 2
not an index, a refused ``--sql`` or a bad argument.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

from magi_format.text import literal

Print = Callable[[object], None]
Fail = Callable[[str], int]


def add_parsers(sub: Any, cmd_index: Callable[[argparse.Namespace], int],
                cmd_history: Callable[[argparse.Namespace], int]) -> None:
    sp = sub.add_parser("index", help="index runs and logs into Parquet tables for magi-tui history (headless)",
                        description="Walks run dirs, magi_depyf roots, TORCH_TRACE folders and logs (.log.gz too) "
                                    "and debug folders; appends one row per run, compile, graph-break site, "
                                    "recompile, cache lookup, check and frame to INDEX (Parquet, by date). Runs "
                                    "already indexed at their present size are skipped. Exit 0 written, 2 no run "
                                    "or an index that cannot be written.")
    sp.add_argument("roots", nargs="+", metavar="ROOT")
    sp.add_argument("-o", "--output", required=True, metavar="INDEX", help="the index folder (made if missing)")
    sp.add_argument("-j", "--jobs", type=int, default=None, help="processes reading runs (default: the CPUs)")
    sp.add_argument("--json", action="store_true", help="what was indexed, as JSON")
    sp.set_defaults(func=cmd_index)

    sp = sub.add_parser("history", help="ask an index: first-seen ID, gone ID, trend, top causes, regressions, "
                                        "--sql (headless)",
                        description="first-seen ID | gone ID | trend [--metric M] [--label L] [--last N] | "
                                    "top causes [--since DATE] | regressions [--last N] | --sql \"SELECT …\" "
                                    "(read-only). Exit 0 answered, 2 not an index or a refused query.")
    sp.add_argument("index", metavar="INDEX")
    sp.add_argument("question", nargs="*", help="first-seen ID, gone ID, trend, top causes, regressions")
    sp.add_argument("--metric", default="compile_time", help="trend: compile_time, breaks, recompiles, cache_hit_rate")
    sp.add_argument("--label", default=None, help="only runs with this label or program")
    sp.add_argument("--last", type=int, default=None, metavar="N", help="trend: the last N runs (default 50); "
                                                                        "regressions: the last N runs checked (20)")
    sp.add_argument("--since", default=None, metavar="DATE", help="top causes: from this day (YYYY-MM-DD)")
    sp.add_argument("--sql", default=None, help="a read-only SELECT over the tables (docs/HISTORY.md)")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_history)


def run_index(args: argparse.Namespace, print_json: Print, fail: Fail) -> int:
    from magi_tui.history.write import IndexError_, index_runs

    try:
        res = index_runs([Path(r) for r in args.roots], Path(args.output), jobs=args.jobs)
    except IndexError_ as exc:
        return fail(str(exc))
    for path, err in res.errors:
        print(f"magi-tui: {literal(path)}: {literal(err)}", file=sys.stderr)
    if args.json:
        print_json(res.as_json())
    else:
        print(f"indexed {len(res.read)} run(s), {res.unchanged} unchanged, {len(res.errors)} with errors, "
              f"into {literal(args.output)} in {res.seconds:.2f} s")
    if res.found == 0:
        return fail(f"no runs under {' '.join(args.roots)}")
    return 0


def _fmt(v: Any) -> str:
    if isinstance(v, float):
        return f"{v:.4g}"
    return "-" if v is None else str(v)


def _text(answer: dict[str, Any], q: str) -> str:
    def run(r: dict[str, Any] | None) -> str:
        return "-" if r is None else f"{r['started']}  {literal(r['path'])}"

    if q == "first-seen":
        if answer["first_seen"] is None:
            return f"{literal(answer['id'])}: never seen in this index"
        return (f"{literal(answer['id'])}\n  first seen: {run(answer['first_seen'])}\n"
                f"  last seen:  {run(answer['last_seen'])}\n  in {answer['runs_with_it']} run(s)")
    if q == "gone":
        lines = [f"{literal(answer['id'])}: {answer['state']}"]
        if answer["last_seen"]:
            lines.append(f"  last seen: {run(answer['last_seen'])}")
        if answer["gone_in"]:
            lines.append(f"  gone in:   {run(answer['gone_in'])}")
        return "\n".join(lines)
    if q == "trend":
        return "\n".join([f"{answer['metric']} over {len(answer['runs'])} run(s)"] +
                         [f"  {r['started']}  {_fmt(r['value']):>10}  {literal(r['label'])}" for r in answer["runs"]])
    if q == "top":
        return "\n".join(["RUNS  TOTAL  KIND         ID  (first seen .. last seen)"] +
                         [f"{c['runs']:>4} {c['total']:>6}  {c['kind']:12} {literal(c['id'])}  "
                          f"({c['first_seen']} .. {c['last_seen']})" for c in answer["causes"]])
    regs = answer["regressions"]
    if not regs:
        return f"no regression in the last {answer['last']} run(s) (band: the {answer['band_runs']} runs before each)"
    return "\n".join(
        f"{r['started']}  {r['metric']}: {_fmt(r['value'])} outside {_fmt(r['band_low'])}..{_fmt(r['band_high'])}"
        + (f"  frame {literal(r['frame'])} +{_fmt(r['frame_grew_s'])} s" if r["frame"] else "")
        + f"  {literal(r['path'])}" for r in regs)


def run_history(args: argparse.Namespace, print_json: Print, fail: Fail) -> int:
    from magi_tui.history import query

    words = list(args.question)
    if args.sql is None and not words:
        return fail("history: ask first-seen ID, gone ID, trend, top causes, regressions, or --sql \"SELECT …\"")
    try:
        h = query.History(args.index)
    except query.QueryError as exc:
        return fail(str(exc))
    try:
        if args.sql is not None:
            if words:
                return fail("history: --sql or a question, not both")
            cols, rows = h.user_sql(args.sql)
            if args.json:
                print_json([{c: query._iso(v) for c, v in zip(cols, r)} for r in rows])
            else:
                print("\t".join(cols))
                for r in rows:
                    print("\t".join(literal(_fmt(query._iso(v))) for v in r))
            return 0
        q = words[0]
        if q in ("first-seen", "gone"):
            if len(words) != 2:
                return fail(f"history {q} ID: one id (a break id GB…@file:line, a recompile cause, a rule id)")
            answer = (query.first_seen if q == "first-seen" else query.gone)(h, words[1], args.label)
        elif q == "trend" and len(words) == 1:
            answer = query.trend(h, args.metric, args.label, args.last or 50)
        elif q == "top" and words[1:] == ["causes"]:
            q = "top"
            answer = query.top_causes(h, args.since)
        elif q == "regressions" and len(words) == 1:
            answer = query.regressions(h, args.last or 20, args.label)
        else:
            return fail(f"history: unknown question {' '.join(words)!r} (first-seen ID, gone ID, trend, top causes, "
                        "regressions)")
    except query.QueryError as exc:
        return fail(str(exc))
    finally:
        h.close()
    if args.json:
        print_json(answer)
    else:
        print(_text(answer, q))
    return 0


def gate(runs: list[Any], index: str, last: int = 10) -> list[Any]:
    """``check --history INDEX``: budgets of the runs checked against the index's trend — compile time above
    the band of the last ``last`` runs of the same program, a graph-break id the index has never seen."""
    from magi_tui.history import query
    from magi_tui.history.collect import collect
    from magi_tui.model.outputs.budget import Result

    h = query.History(index)
    out = []
    try:
        for run in runs:
            rows = collect(Path(run.path))
            r = rows["runs"][0]
            label = r.get("program")
            past = query.trend(h, "compile_time", label, last)["runs"]
            values = [p["value"] for p in past if p["value"] is not None and p["path"] != str(Path(run.path).absolute())]
            value = r.get("compile_time_s")
            name = f"history.compile_time ({literal(str(run.path))})"
            if value is None or len(values) < query.MIN_HISTORY:
                out.append(Result(name, None, value, skipped=f"{len(values)} earlier run(s) of {label} in the index"
                                  if value is not None else "no compile time recorded"))
            else:
                mean = sum(values) / len(values)
                sd = (sum((v - mean) ** 2 for v in values) / (len(values) - 1)) ** 0.5
                high = mean + max(3 * sd, 0.1 * abs(mean))
                ok = value <= high
                out.append(Result(name, round(high, 6), round(value, 6), ok=ok,
                                  line="" if ok else f"compile time {value:.3g} s is above the band of the last "
                                  f"{len(values)} indexed runs of {label} (mean {mean:.3g} s, at most {high:.3g} s)"))
            ids = sorted({b["id"] for b in rows.get("breaks", [])})
            new = [i for i in ids if query.first_seen(h, i)["first_seen"] is None]
            out.append(Result(f"history.new_breaks ({literal(str(run.path))})", 0, new, ok=not new,
                              line="" if not new else "graph break(s) never seen in the index: " + ", ".join(new)))
    finally:
        h.close()
    return out
