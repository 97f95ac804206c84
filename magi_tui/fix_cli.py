"""``magi-tui fix``: its options, table and exit codes (docs/HEADLESS.md).

Kept out of ``cli.py`` so that file stays the list of commands; the work is in :mod:`magi_tui.live.fix`
(the runs) and :mod:`magi_tui.model.outputs.fixes` (the candidates).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import TYPE_CHECKING, Callable

from magi_format.text import literal

if TYPE_CHECKING:  # the fix is imported when the command runs
    from magi_tui.live.fix import FixResult


def add_parser(sub: argparse._SubParsersAction, cmd_fix: Callable[[argparse.Namespace], int]) -> None:
    sp = sub.add_parser(
        "fix", help="try the fixes for a program's recompiles and graph breaks, re-run, and show the delta",
        description="Runs the program traced (the baseline), derives changes that need no code edit from its "
                    "recompiles and graph breaks (environment variables / torch._dynamo.config lines, with a "
                    "patch for the script), re-runs it with each and keeps a change only when the exit code "
                    "and printed numbers are unchanged and graph breaks or recompiles go down. "
                    "The baseline runs twice first: a program whose two runs print other numbers is "
                    "nondeterministic and no change is tried. "
                    "Exit 0: it completed (whether or not a change was kept); 1: the baseline could not run "
                    "or be read; 2: usage error; 3: nondeterministic (the baseline's two runs disagree).")
    sp.add_argument("--max-runs", type=int, default=None, metavar="N",
                    help="at most N runs of the program, the baseline included (default 8)")
    sp.add_argument("--rtol", type=float, default=None, help="relative tolerance for printed numbers (default 1e-4)")
    sp.add_argument("--atol", type=float, default=None, help="absolute tolerance for printed numbers (default 1e-5)")
    sp.add_argument("--timeout", type=float, default=None, metavar="S",
                    help="a run taking longer is stopped (default: none on the baseline, then 3x its time + 60 s)")
    sp.add_argument("-o", "--output", default="runs", help="root for the fix's folder of runs (default ./runs)")
    sp.add_argument("--json", action="store_true", help="the result as JSON on stdout")
    sp.add_argument("command", nargs=argparse.REMAINDER, help="-- python script.py args...")
    sp.set_defaults(func=cmd_fix)


def result_text(res: FixResult) -> str:
    """The table and the candidates (:func:`magi_tui.model.outputs.fixes.fix_lines`, as the app shows them)."""
    from magi_tui.model.outputs.fixes import fix_lines

    lines = [text for _style, text, _i in fix_lines(res.as_json())]
    if res.directory:
        lines.append(f"runs and fix.json: {res.directory}  (magi-tui compare <baseline run> <best run>)")
    return "\n".join(lines)


def run_fix_command(args: argparse.Namespace, print_json: Callable[[object], None],
                    fail: Callable[[str], int]) -> int:
    import os

    from magi_tui.live.fix import DEFAULT_MAX_RUNS, Fixer, new_fix_dir, script_of, write_fix_json

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return fail("nothing to fix: magi-tui fix [--json] [--max-runs N] -- python script.py args...")
    script = script_of(command)
    if script is None:
        return fail("magi-tui fix runs a python script.py command (the tracer runs the script): "
                    f"{' '.join(command)}")
    if not os.path.isfile(script):
        return fail(f"no such script: {script}")
    for name in ("rtol", "atol", "timeout"):
        v = getattr(args, name)
        if v is not None and (not math.isfinite(v) or v < 0 or (name == "timeout" and v == 0)):
            return fail(f"--{name}: must be a finite number of at least 0, not {v}")
    max_runs = DEFAULT_MAX_RUNS if args.max_runs is None else args.max_runs
    if max_runs < 2:
        return fail(f"--max-runs: at least 2 (the baseline and one candidate), not {max_runs}")
    try:
        directory = new_fix_dir(args.output)
    except OSError as exc:
        return fail(f"-o: cannot create a folder under {args.output}: {exc}")

    def on_step(line: str) -> None:
        if not args.json:
            print(literal(line), file=sys.stderr, flush=True)

    from magi_tui.bisect_cli import print_result, signal_exit, verdict_exit
    from magi_tui.live.trial import stop_on_signals

    fixer = Fixer(command, directory, max_runs=max_runs, rtol=args.rtol, atol=args.atol, timeout=args.timeout,
                  on_step=on_step)
    # SIGTERM / SIGHUP / SIGINT: the running trial's processes killed at once, fix.json written marked
    # interrupted, the result so far printed, exit 128 + the signal's number
    with stop_on_signals(fixer.interrupt):
        res = fixer.run()
        problem = write_fix_json(res)
        if problem:
            res.notes.append(problem)
        code = print_result(res, result_text(res), "fix", args.json, print_json)
    return signal_exit(fixer.signal, verdict_exit(res, code))
