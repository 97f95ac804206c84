"""``magi-tui bisect`` and ``magi-tui report``: their options, text and exit codes (docs/HEADLESS.md).

Kept out of ``cli.py`` so that file stays the list of commands; the work is in
:mod:`magi_tui.live.bisect` (the bisect) and :mod:`magi_tui.model.outputs.bugreport` (the bundle).
"""

from __future__ import annotations

import argparse
import math
import os
import signal
import sys
import threading
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable

from magi_format.text import literal

if TYPE_CHECKING:  # the bisect is imported when the command runs
    from magi_tui.live.bisect import BisectResult, Step

#: a command's function: the parsed arguments -> its exit code
Command = Callable[[argparse.Namespace], int]


def add_parsers(sub: argparse._SubParsersAction, cmd_bisect: Command, cmd_report: Command) -> None:
    sp = sub.add_parser(
        "bisect", help="find the layer, stage and graph of a compile that makes a program wrong or crash",
        description="Runs the program many times, traced, each time with part of torch.compile swapped out: "
                    "every graph on eager / aot_eager / aot_eager_decomp_partition, then Inductor's stages "
                    "switched off and bisected (torch's compiler bisector protocol), then the graph. "
                    "The failure must reproduce as reported first (the program as it is), and with "
                    "--compare-output the reference must print the same numbers twice. "
                    "Exit 0: the bisect completed (a culprit, or the failure did not reproduce); 1: it could "
                    "not run; 2: usage error; 3: nondeterministic (two reference runs disagree).")
    sp.add_argument("--compare-output", action="store_true",
                    help="the bug is wrong numbers: a run reproduces when the numbers it prints differ from "
                         "its run with torch.compile disabled (default: when it exits non-zero)")
    sp.add_argument("--rtol", type=float, default=None, help="relative tolerance (default 1e-4)")
    sp.add_argument("--atol", type=float, default=None, help="absolute tolerance (default 1e-5)")
    sp.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="a run that takes longer reproduces (a hang); default: none on the first run, then "
                         "3x its time + 60 s")
    sp.add_argument("-o", "--output", default="runs",
                    help="root for the bisect's folder of runs (default ./runs)")
    sp.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    sp.add_argument("--app", action="store_true",
                    help="bisect in the app: its steps shown as they are made, then the culprit (Enter opens "
                         "a step's run; ctrl+c stops); the summary is printed when the app closes")
    sp.add_argument("command", nargs=argparse.REMAINDER, help="-- python script.py args...")
    sp.set_defaults(func=cmd_bisect)

    sp = sub.add_parser("report", help="a bug-report bundle (Markdown and a folder) for a run or a bisect",
                        description="PATH: a run directory or a bisect folder (bisect.json). Writes "
                                    "DIR/REPORT.md and the files it links to, copied from the run; anything that "
                                    "looks like a credential is redacted. "
                                    "Exit 0: written; 2: unusable input.")
    sp.add_argument("path", metavar="PATH")
    sp.add_argument("-o", "--output", metavar="DIR", default=None,
                    help="where to write it (default ./bug_report_<name>; must not exist or be empty)")
    sp.set_defaults(func=cmd_report)


def _step_line(step: Step) -> str:
    where = f"  {step.change}" if step.change else ""
    return (f"  {step.verdict:10} {step.seconds:6.1f}s{where}"
            + (f"  [{step.why}]" if step.why and step.verdict != "passes" else ""))


def result_text(res: BisectResult) -> str:
    """The text report: what was found, then the steps."""
    lines = [res.summary()]
    c = res.culprit
    if c:
        lines.append(f"  layer:     {c.get('layer')}")
        if c.get("subsystem"):
            lines.append(f"  stage:     {c['subsystem']}" + (f", application #{c['bisect_number']} of "
                                                             f"{c.get('applications')}" if c.get("applications") else ""))
        if c.get("debug_info"):
            lines.append(f"  what:      {c['debug_info']}")
        g = c.get("graph")
        if g:
            lines.append(f"  graph:     {g.get('compile_id')} {g.get('frame') or ''} ({g.get('found_by')})")
            if g.get("run"):
                lines.append(f"  its run:   {g['run']}")
            own = g.get("pass_diff")
            if own:
                lines.append(f"  its diff:  what application #{own['application']} alone changed in {own['file']} "
                             f"(-{own['removed']} +{own['added']}; the run up to the one before it vs the run "
                             "up to it, later ones off in both):")
                lines.extend(f"      {ln}" for ln in own["lines"])
                lines.append(f"             {own['before']['run']}/{own['before']['file']}")
                lines.append(f"         ->  {own['after']['run']}/{own['after']['file']}")
            if g.get("before"):
                lines.append(f"  diff:      {g['before']}  ->  {g['after']}" + ("  (the whole stage)" if own else ""))
    ref = res.reference
    if ref and not ref.get("deterministic"):
        lines.append("  moved (the first reference run -, the second +):")
        lines.extend(f"      {m}" for m in ref.get("moved") or [])
        for m in (ref.get("numbers_moved") or [])[:5]:
            lines.append(f"      number {m['index']}: {m['first']} then {m['second']}")
        if (ref.get("numbers_changed") or 0) > 5:
            lines.append(f"      … {ref['numbers_changed'] - 5} more number(s) changed")
    elif ref and ref.get("numbers_changed"):
        lines.append(f"  reference: its two runs agree within the tolerances ({ref['numbers_changed']} number(s) "
                     f"moved, at most {ref['max_abs_diff']:.3g})")
    for a in res.advice:
        lines.append(f"  → {a}")
    for n in res.notes:
        lines.append(f"  note: {n}")
    lines.append(f"steps ({res.runs} run(s); torch's bisector: "
                 f"{'n/a' if res.torch_runs is None else res.torch_runs}):")
    lines.extend(_step_line(s) for s in res.steps)
    if res.directory:
        lines.append(f"runs and bisect.json: {res.directory}  (magi-tui report {res.directory})")
    return "\n".join(lines)


def _usage(command: list[str]) -> str | None:
    from magi_tui.live.runner import tracer_command

    if not command:
        return "nothing to bisect: magi-tui bisect [--compare-output] -- python script.py args..."
    argv = tracer_command(command, "runs")
    if argv != list(command):
        script = argv[argv.index("-o") + 2]
        if not os.path.isfile(script):
            return f"no such script: {script}"
    return None


def run_bisect_command(args: argparse.Namespace, print_json: Callable[[object], None],
                       fail: Callable[[str], int]) -> int:
    from magi_tui.live.bisect import Bisector, new_bisect_dir
    from magi_tui.live.trial import stop_on_signals

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    problem = _usage(command)
    if problem:
        return fail(problem)
    for name in ("rtol", "atol", "timeout"):
        v = getattr(args, name)
        if v is not None and (not math.isfinite(v) or v < 0 or (name == "timeout" and v == 0)):
            return fail(f"--{name}: must be a finite number above 0, not {v}")
    try:
        directory = new_bisect_dir(args.output)
    except OSError as exc:
        return fail(f"-o: cannot create a folder under {args.output}: {exc}")

    def on_step(step: Step) -> None:
        if not args.json:
            print(literal(_step_line(step)), file=sys.stderr, flush=True)

    if not args.json:
        print(literal(f"bisecting {' '.join(command)} ({'numbers vs torch.compile disabled' if args.compare_output else 'exit code'}); "
                      f"runs under {directory}"), file=sys.stderr, flush=True)
    if getattr(args, "app", False):
        return _bisect_in_app(command, directory, args, print_json)
    bis = Bisector(command, directory, compare_output=args.compare_output, rtol=args.rtol, atol=args.atol,
                   timeout=args.timeout, on_step=on_step, cancel=threading.Event())
    # SIGTERM / SIGHUP / SIGINT: the running trial's processes killed at once, bisect.json written marked
    # interrupted, the result so far printed, exit 128 + the signal's number
    with stop_on_signals(bis.interrupt):
        res = bis.run()
        code = print_result(res, result_text(res), "bisect", args.json, print_json)
    return signal_exit(bis.signal, verdict_exit(res, code))


#: the exit code of a bisect or fix whose reference disagreed with itself (docs/HEADLESS.md)
EXIT_NONDETERMINISTIC = 3


def verdict_exit(res: Any, code: int) -> int:
    """``code``, or :data:`EXIT_NONDETERMINISTIC` for a result whose verdict is ``nondeterministic``."""
    return EXIT_NONDETERMINISTIC if code == 0 and getattr(res, "verdict", None) == "nondeterministic" else code


def signal_exit(name: str | None, code: int) -> int:
    """128 + the number of the signal that stopped a trials command (``name``), else ``code``."""
    if name is None:
        return code
    try:
        return 128 + signal.Signals[name].value
    except KeyError:
        return code


def print_result(res: Any, text: str, verb: str, as_json: bool, print_json: Callable[[object], None]) -> int:
    """A trials command's result (bisect, fix) as JSON or text; exit 1 with ``could not <verb>`` when it could not
    run, else 0."""
    try:
        if as_json:
            print_json(res.as_json())
        else:
            print(literal(text, multiline=True))
        if res.error:
            print(f"magi-tui: {literal(f'could not {verb}: ' + res.error)}", file=sys.stderr)
    except (OSError, ValueError):
        # the terminal is gone (SIGHUP) or the reader of a pipe: the result is in its JSON file; nothing
        # more is written (the interpreter's last flush would fail again and change the exit code)
        sys.stdout = sys.stderr = open(os.devnull, "w")
    return 1 if res.error else 0


def _bisect_in_app(command: list[str], directory: Path, args: argparse.Namespace,
                   print_json: Callable[[object], None]) -> int:
    """``--app``: the bisect runs in the app's worker thread; when the app closes it is stopped (its running
    trial killed) if it had not finished, and its result printed as without ``--app``. SIGTERM / SIGHUP
    stop the bisect and close the app."""
    from magi_tui.live.bisect import Bisector
    from magi_tui.live.trial import stop_on_signals
    from magi_tui.ui.app import MagiApp

    cancel = threading.Event()
    bis = Bisector(command, directory, compare_output=args.compare_output, rtol=args.rtol, atol=args.atol,
                   timeout=args.timeout, cancel=cancel)
    app = MagiApp(directory, bisector=bis)

    def on_signal(signo: int) -> None:
        bis.interrupt(signo)  # its trial killed; the worker writes bisect.json, marked interrupted
        threading.Thread(target=_close_app, args=(app,), daemon=True).start()

    with stop_on_signals(on_signal):
        try:
            app.run()
        finally:
            cancel.set()  # never leave a trial running; the worker thread returns within a tick
            if bis.started:
                bis.done.wait(30)
        res = bis.result
        code = print_result(res, result_text(res), "bisect", args.json, print_json)
    return signal_exit(bis.signal, verdict_exit(res, code))


def _close_app(app: Any) -> None:
    try:
        app.call_from_thread(app.exit)
    except Exception:  # not running (yet, or any more)
        pass


def run_report_command(args: argparse.Namespace, fail: Callable) -> int:
    from magi_tui.model.outputs.bugreport import ReportError, build_report, write_report

    try:
        report = build_report(Path(args.path))
        out = Path(args.output) if args.output else Path(f"bug_report_{report.name}")
        written = write_report(report, out)
    except ReportError as exc:
        return fail(str(exc))
    print(literal(f"wrote {written} ({report.written} file(s) beside it)"))
    if report.reproduce:  # the first command that reproduces it, run from the bundle's folder
        import shlex

        print(literal(f"reproduce: cd {shlex.quote(str(written.parent))} && {report.reproduce[0]}"))
    if report.redactor.total:  # what was left out, by kind (the same line is under REPORT.md's title)
        print(literal(report.redactor.summary()))
    return 0
