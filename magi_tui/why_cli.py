"""``magi-tui why -- python train.py args…``: the one-step drop-in for people who read ``TORCH_LOGS`` today.

Runs the program under the tracer (its output passes through unchanged, its stdin is the terminal's), then
prints the triage of the run it recorded, as ``magi-tui triage`` would, and exits with triage's exit code
(docs/HEADLESS.md): 1 when the program crashed in torch.compile or in compiled code, was interrupted, or
left a failure nothing recovered, 0 otherwise. Kept out of ``cli.py``, which stays the list of commands.
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import threading
from pathlib import Path
from typing import IO, Callable

from magi_format.layout import RUN_DIR_ANNOUNCE


def add_parser(sub: argparse._SubParsersAction, cmd: Callable[[argparse.Namespace], int]) -> None:
    sp = sub.add_parser(
        "why", help="run a Python program under the tracer, then print its triage (exit code as triage)",
        description="Runs `python script.py args…` under the tracer (same output, same stdin), then prints the "
                    "triage of the run it recorded: how the program ended, graph breaks, recompiles explained, "
                    "frames, cache, compile time. Exit codes are triage's: 0 nothing failed, 1 a failure "
                    "(a crash in torch.compile or compiled code, an interrupt, an unrecovered failure), "
                    "2 no run was recorded (the program is not a Python script, or it died before torch).")
    sp.add_argument("-o", "--output", default="runs", help="root for the run directory (default ./runs)")
    sp.add_argument("--json", action="store_true", help="the triage as JSON on stdout (the program's stdout "
                                                        "goes to stderr then, so stdout stays one JSON document)")
    sp.add_argument("--all", action="store_true", help="list everything (text report)")
    sp.add_argument("--fail-on", default=None, metavar="RULES", help="as triage --fail-on")
    sp.add_argument("command", nargs=argparse.REMAINDER, help="-- python script.py args...")
    sp.set_defaults(func=cmd)


def _forward_stderr(stream: IO[bytes], found: list[str]) -> None:
    """The program's stderr to ours, line by line; the tracer's run-dir line is remembered, not shown."""
    for raw in iter(stream.readline, b""):
        text = raw.decode("utf-8", "replace")
        if text.startswith(RUN_DIR_ANNOUNCE) and not found:
            found.append(text[len(RUN_DIR_ANNOUNCE):].strip())
            continue
        sys.stderr.buffer.write(raw)
        sys.stderr.flush()


def run_why(args: argparse.Namespace, triage: Callable[[Path, argparse.Namespace], int],
            fail: Callable[[str], int]) -> int:
    from magi_tui.live.runner import tracer_command

    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return fail("nothing to run: magi-tui why [-o ROOT] -- python script.py args...")
    traced = tracer_command(command, args.output)
    if traced == command:
        return fail("magi-tui why runs a Python script (`python script.py args…`); for anything else, record "
                    "it with TORCH_TRACE=DIR and run magi-tui triage DIR")
    found: list[str] = []
    proc = subprocess.Popen(traced, stdout=sys.stderr if args.json else None, stderr=subprocess.PIPE)
    assert proc.stderr is not None
    reader = threading.Thread(target=_forward_stderr, args=(proc.stderr, found), daemon=True)
    reader.start()
    while True:
        try:
            code = proc.wait()
            break
        except KeyboardInterrupt:  # the terminal sent it to the program too: let it end as it ends
            continue
    reader.join(timeout=5)
    if not found:
        return fail(f"no run was recorded (the program exited {code} before torch was imported, or the "
                    "tracer could not create its run directory)")
    print(f"\nmagi-tui why: the program exited {code}; its run: {found[0]}", file=sys.stderr, flush=True)
    return triage(Path(found[0]), args)
