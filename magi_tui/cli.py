"""The ``magi-tui`` command line.

``magi-tui [PATH]`` opens the app; ``runs`` and ``triage`` are headless (no Textual import, so they
are quick on a login node and usable in scripts); ``attach`` follows a live compile; ``run`` starts a
program under the tracer and follows it. Errors are one clear line on stderr, never a traceback.
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from magi_format.text import literal
from magi_tui import __version__

if TYPE_CHECKING:  # the model is imported where a command needs it (a quick start for the others)
    from magi_tui.model.run import RunModel

__all__ = ["main", "literal"]


def _dump_json(obj: object) -> str:
    """JSON with non-ASCII kept readable, but no raw control character reaching the terminal: byte for
    byte ``json.dumps(obj, indent=2, ensure_ascii=False)`` (model/json_stream.py ``encode``)."""
    from magi_tui.model.json_stream import encode, materialize

    out = encode(materialize(obj))
    return out.decode("ascii") if isinstance(out, bytes) else out


def _print_json(obj: object) -> None:
    """``print(_dump_json(obj))``, a piece at a time (model/json_stream.py ``write_json``: a big list is
    made and encoded a batch at a time); ASCII pieces go to stdout's bytes as they are."""
    from magi_tui.model.json_stream import write_json

    buf = getattr(sys.stdout, "buffer", None)
    if buf is None:  # a stdout with no bytes under it (a test's StringIO)
        write_json(obj, lambda b: sys.stdout.write(b.decode("ascii")), sys.stdout.write)
        return

    def write_bytes(b: bytes) -> None:
        sys.stdout.flush()  # what went as text first
        buf.write(b)

    write_json(obj, write_bytes, sys.stdout.write)
    sys.stdout.flush()
    buf.flush()


def _default_path() -> Path:
    runs = Path("runs")
    return runs if runs.is_dir() else Path(".")


def _load_runs(path: Path, stream: bool = False, fold: Callable[[], object] | None = None) -> list[RunModel]:
    """Every run under ``path``, read whole (kept to the end: frozen out of the GC). ``stream``: for a
    command that reads only the analysis and the reports (``triage``, ``runs``, ``check``), each event
    is folded in and dropped (``RunModel.load(fold=...)``), so memory follows the answer, not the run."""
    from magi_tui.model import RunModel, find_runs
    from magi_tui.model.analysis.checks import TimelineFold

    if not path.exists():
        raise SystemExit(_fail(f"no such file or directory: {path}"))
    found = find_runs(path)
    runs = [RunModel(r.path).load(fold=fold() if fold else TimelineFold() if stream else None)
            for r in found]
    for r in runs:
        if r.error:  # one clear line per broken timeline, the rest of the report still comes
            print(f"magi-tui: {literal(str(r.reader.path))}: {literal(r.error)}", file=sys.stderr)
    return runs


def _fail(msg: str, code: int = 2) -> int:
    print(f"magi-tui: {literal(msg)}", file=sys.stderr)
    return code


def cmd_runs(args: argparse.Namespace) -> int:
    from magi_tui.model.outputs.report import fmt_duration, run_row

    path = Path(args.path) if args.path else _default_path()
    runs = _load_runs(path, stream=True)
    rows = sorted((run_row(r) for r in runs), key=lambda r: -(r["started"] or 0))
    if args.json:
        _print_json(rows)
    else:
        if rows:
            print(f"{'STARTED':19}  {'LABEL':28} {'RANK':>4} {'EVENTS':>6} {'FAIL':>4}  {'STATUS':10} {'DURATION':>8}  PATH")
        for r in rows:
            print(f"{r['started_text']:19}  {literal(r['label'])[:28]:28} {r['rank'] if r['rank'] is not None else '-':>4} "
                  f"{r['events']:>6} {r['failures']:>4}  {r['status']:10} {fmt_duration(r['duration_s']):>8}  "
                  f"{literal(r['path'])}")
    if not rows:
        return _fail(f"no runs under {path} (a run is a directory with timeline_events/ or compiled_functions/, a TORCH_TRACE log, or a TORCH_COMPILE_DEBUG folder)")
    return 0


#: the ``--fail-on`` help; the names are the model's (model/analysis/checks/rules.py: RULES and FAIL_ON_KINDS)
FAIL_ON_HELP = ("also exit 1 on these (comma-separated): rule ids (magi-tui check --list-rules) or the kinds "
                "recovered, recompile, graph-break, fallback")


def _fail_on(value: str | None) -> tuple[str, ...]:
    from magi_tui.model.analysis.checks import UnknownRule, parse_fail_on

    try:
        return parse_fail_on(value)
    except UnknownRule as exc:
        raise SystemExit(str(exc)) from None


def triage_exit_code(runs: list[RunModel], fail_on: tuple[str, ...] | frozenset = frozenset()) -> int:
    """0: no unrecovered failure; 1: an unrecovered failure or an incomplete run (or what ``--fail-on``
    adds: a named rule that does not hold, a named kind that does); 2: no usable run (docs/HEADLESS.md)."""
    from magi_tui.model.analysis.checks import analyse, failing

    if not runs or all(r.error for r in runs):
        return 2
    for r in runs:
        if r.error:
            continue
        a = analyse(r)
        if a.exit_failed:
            return 1
        if fail_on and failing(a, fail_on):
            return 1
    return 0


def cmd_triage(args: argparse.Namespace) -> int:
    from magi_tui.model.outputs.report import triage_document, triage_text

    fail_on = _fail_on(args.fail_on)
    path = Path(args.path) if args.path else _default_path()
    _against(args)
    runs = _load_runs(path, stream=True)
    if not runs:
        return _fail(f"no runs under {path} (a run is a directory with timeline_events/ or compiled_functions/, a TORCH_TRACE log, or a TORCH_COMPILE_DEBUG folder)")
    if args.json:
        objs = [triage_document(r) for r in runs]  # its big lists made as they are written
        _print_json(objs[0] if len(objs) == 1 else objs)
    else:
        print("\n\n".join(literal(triage_text(r, show_all=args.all), multiline=True) for r in runs))
    return triage_exit_code(runs, fail_on)


def _against(args: argparse.Namespace) -> None:
    """``--against ROOT``: where else the run that filled the cache may be (model/analysis/cache_baseline.py)."""
    roots = getattr(args, "against", None) or []
    for r in roots:
        if not Path(r).exists():
            raise SystemExit(_fail(f"--against: no such file or directory: {r}"))
    if roots:
        from magi_tui.model.analysis.cache_baseline import look_also_under

        look_also_under(roots)


def cmd_why(args: argparse.Namespace) -> int:
    from magi_tui.why_cli import run_why

    def triage(path: Path, a: argparse.Namespace) -> int:
        ns = argparse.Namespace(path=str(path), json=a.json, all=a.all, fail_on=a.fail_on)
        return cmd_triage(ns)

    _fail_on(args.fail_on)  # a bad name is refused before the program runs
    return run_why(args, triage, _fail)


def cmd_index(args: argparse.Namespace) -> int:
    from magi_tui.history_cli import run_index

    return run_index(args, _print_json, _fail)


def cmd_history(args: argparse.Namespace) -> int:
    from magi_tui.history_cli import run_history

    return run_history(args, _print_json, _fail)


def cmd_compare(args: argparse.Namespace) -> int:
    """Run vs run (docs/HEADLESS.md): exit 0 when compared, 2 on unusable input."""
    from magi_tui.model.outputs.compare import compare_runs, compare_text, one_run

    # streamed: each run's events folded into its analysis and its side of the comparison, then dropped
    # (two 100k-frame logs kept whole were 1.2 GB)
    run_a, problem = one_run(args.a, stream=True)
    if run_a is None:  # one_run gives a run or the reason why not
        return _fail(f"A: {problem}")
    run_b, problem = one_run(args.b, stream=True)
    if run_b is None:
        return _fail(f"B: {problem}")
    c = compare_runs(run_a, run_b)
    if args.json:
        _print_json(c.as_json())
    else:
        print(literal(compare_text(c, show_all=args.all), multiline=True))
    return 0


def cmd_export_trace(args: argparse.Namespace) -> int:
    """Chrome trace-event JSON of every run under PATH, one process per rank: exit 0 written, 1 written but
    holding no timed event, 2 unusable input or an output that cannot be written."""
    from magi_tui.model.outputs.chrome_trace import build_trace, trace_bytes

    path = Path(args.path)
    if not path.exists():
        return _fail(f"no such file or directory: {path}")
    built = build_trace(path, args.source)
    if built is None:
        return _fail(f"no run under {path} (a TORCH_TRACE log or a folder of them, a run dir, a root of runs)")
    trace, procs = built
    data = trace_bytes(trace)
    try:
        if args.output == "-":
            sys.stdout.buffer.write(data + b"\n")
            sys.stdout.flush()
        else:
            Path(args.output).write_bytes(data)
    except OSError as exc:
        return _fail(f"cannot write {args.output}: {exc.strerror or exc}")
    n = sum(len(p.events) for p in procs)
    out = sys.stderr if args.output == "-" else sys.stdout
    for p in procs:
        what = {"chromium_event": "torch's chromium events", "lifecycle_spans": "lifecycle spans"}.get(p.source, "nothing")
        print(literal(f"pid {p.pid}: {len(p.events)} event(s) from {what} of {p.run}"
                      + (f" ({p.unfinished} never finished)" if p.unfinished else "")), file=out)
    print(literal(f"wrote {n} event(s), {len(procs)} process(es) to {args.output}"
                  + ("" if n else ": nothing timed was recorded")), file=out)
    return 0 if n else 1


def cmd_ranks(args: argparse.Namespace) -> int:
    """Rank vs rank: exit 0 when every rank agrees, 1 when ranks diverge, 2 on unusable input."""
    from magi_tui.model.outputs.ranks import find_jobs, ranks_json, ranks_lines

    path = Path(args.path) if args.path else _default_path()
    if not path.exists():
        return _fail(f"no such file or directory: {path}")
    jobs, loners = find_jobs(path)
    if not jobs:
        return _fail(f"no job with several ranks under {path} (runs named model_<i>_<label>_rank_<r>, or a "
                     f"folder of TORCH_TRACE logs of several ranks; {len(loners)} run(s) without a second rank)")
    if args.json:
        _print_json(ranks_json(jobs))
    else:
        print(literal("\n".join(t for _s, t in ranks_lines(jobs)).rstrip(), multiline=True))
    return 1 if any(j.diverged for j in jobs) else 0


def cmd_check(args: argparse.Namespace) -> int:
    """The CI gate: exit 0 when every budget holds, 1 when one is broken, 2 on unusable input."""
    from magi_tui.model.outputs.budget import PolicyError, check, junit_xml, load_policy, rules_table

    if args.list_rules:
        rows = rules_table()
        if args.json:
            _print_json(rows)
        else:
            print("\n".join(f"{r['id']:22} {r['what']}" + ("  (information: never fails)" if r["kind"] == "information"
                                                             else "") for r in rows))
        return 0
    try:
        policy = load_policy(args.policy).with_fail_on(_fail_on(args.fail_on))
    except PolicyError as exc:
        return _fail(str(exc))
    path = Path(args.path) if args.path else _default_path()
    _against(args)
    # streamed, as triage is (a 100k-frame log kept every event: 416 MB): the budgets read the analysis, and
    # against a baseline each side of the comparison too (compare.sides.SideFold)
    from magi_tui.model.outputs.compare.sides import SideFold

    side = SideFold if args.baseline else None
    runs = _load_runs(path, stream=True, fold=side)
    usable = [r for r in runs if not r.error]
    if not usable:
        return _fail(f"no usable run under {path} (a run is a directory with timeline_events/ or compiled_functions/, a TORCH_TRACE log, or a TORCH_COMPILE_DEBUG folder)")
    base = None
    if args.baseline:
        bpath = Path(args.baseline)
        base = [r for r in _load_runs(bpath, fold=SideFold) if not r.error]
        if not base:
            return _fail(f"--baseline: no usable run under {bpath}")
    try:
        report = check(usable, policy, base)
    except PolicyError as exc:
        return _fail(str(exc))
    if args.history:  # the gate against the index's trend (magi_tui/history_cli.py)
        from magi_tui.history.query import QueryError
        from magi_tui.history_cli import gate

        try:
            report.results.extend(gate(usable, args.history))
        except QueryError as exc:
            return _fail(f"--history: {exc}")
    if args.junit:
        try:
            with open(args.junit, "w", encoding="utf-8") as fh:
                fh.write(junit_xml(report))
        except OSError as exc:
            return _fail(f"--junit: cannot write {args.junit}: {exc.strerror or exc}")
    if args.json:
        _print_json(report.as_json())
    else:
        print(literal(report.text(), multiline=True))
    return report.exit_code


def cmd_metrics(args: argparse.Namespace) -> int:
    """Per compile id: times, guards, graph size, restarts, dynamic shapes (docs/HEADLESS.md). Exit 0;
    2 on unusable input."""
    from magi_tui.model.analysis.metrics import CompileInfoFold, compile_infos, metrics_table
    from magi_tui.model.analysis.provenance import kernel_provenance
    from magi_tui.model.json_stream import Lazy

    path = Path(args.path) if args.path else _default_path()
    # streamed: each event folded into its compile's facts and dropped unless the compile shows it (a
    # 100k-frame log kept every event: 576 MB); the compiles' JSON is made as it is written
    runs = [r for r in _load_runs(path, fold=CompileInfoFold) if not r.error]
    if not runs:
        return _fail(f"no usable run under {path} (a run dir, or a TORCH_TRACE log)")
    if args.json:
        objs = [{"run": str(r.path), "compiles": Lazy({**i.as_json(), "provenance": [
            k.as_json() for k in kernel_provenance(r, i)]} for i in compile_infos(r))} for r in runs]
        _print_json(objs[0] if len(objs) == 1 else objs)
    else:
        def text(r: RunModel) -> str:
            infos = compile_infos(r)
            if not infos:  # upstream runs carry no per-compile metrics: say so instead of an empty table
                return (f"{r.path}\n  no per-compile metrics recorded (no compile lifecycle with metrics.json: "
                        "an upstream magi_depyf run, or nothing compiled); triage PATH shows what was recorded")
            return f"{r.path}\n" + "\n".join(metrics_table(infos))

        print("\n\n".join(literal(text(r), multiline=True) for r in runs))
    return 0


def _keymap_problem(args: argparse.Namespace) -> str | None:
    """A keymap the user named that cannot be read (a FIFO, a device, missing): exit 2 before the app starts."""
    from magi_tui.config import keymap_file_problem

    return keymap_file_problem(args.keymap)


def cmd_app(args: argparse.Namespace) -> int:
    path = Path(args.path) if args.path else _default_path()
    if not path.exists():
        return _fail(f"no such file or directory: {path}")
    if problem := _keymap_problem(args):
        return _fail(problem)
    from magi_tui.ui.app import MagiApp

    app = MagiApp(path, ansi=args.ansi, keymap=args.keymap)
    app.run(mouse=not args.no_mouse)
    return app.return_code or 0


def cmd_serve(args: argparse.Namespace) -> int:
    """The app in a browser (textual-serve): each page load starts ``magi-tui open PATH`` of its own, behind
    :mod:`magi_tui.serve`'s gate (a token in the printed URL, a Host / Origin allow-list, a session cap). The
    default host is loopback (reach it with ``ssh -L PORT:localhost:PORT``)."""
    import shlex

    path = Path(args.path) if args.path else _default_path()
    if not path.exists():
        return _fail(f"no such file or directory: {path}")
    if args.max_sessions < 1:
        return _fail("--max-sessions must be at least 1")
    from magi_tui.serve import Gate, make_server, tls_context

    try:
        ssl_context = tls_context(args.certfile, args.keyfile)
    except ValueError as exc:
        return _fail(str(exc))

    command = shlex.join([sys.executable, "-m", "magi_tui", "open", os.path.abspath(path)])
    # the page opens its websocket at the server's public URL: a wildcard host is no address to a browser
    public = None
    if args.host in ("0.0.0.0", "::", ""):
        import socket

        public = f"http://{socket.gethostname()}:{args.port}"
    gate = Gate.for_bind(args.host, args.allow_host, max_sessions=args.max_sessions)
    make_server(command, host=args.host, port=args.port, title=f"magi-tui {literal(str(path), 80)}",
                public_url=public, gate=gate, ssl_context=ssl_context).serve()
    return 0


def cmd_attach(args: argparse.Namespace) -> int:
    path = Path(args.path)
    if problem := _keymap_problem(args):
        return _fail(problem)
    from magi_tui.ui.app import MagiApp

    app = MagiApp(path, live=True, ansi=args.ansi, keymap=args.keymap)
    app.run(mouse=not args.no_mouse)
    return app.return_code or 0


def cmd_run(args: argparse.Namespace) -> int:
    command = list(args.command)
    if command and command[0] == "--":
        command = command[1:]
    if not command:
        return _fail("nothing to run: magi-tui run [-o ROOT] -- python script.py args...")
    if problem := _keymap_problem(args):
        return _fail(problem)
    from magi_tui.ui.app import MagiApp

    root = Path(args.output)
    app = MagiApp(root, live=True, ansi=args.ansi, command=command, keymap=args.keymap)
    try:
        app.run(mouse=not args.no_mouse)
    finally:
        program = getattr(app, "program", None)  # set by magi_tui.ui.live: never leave it running
        if program is not None:
            program.kill_now()
    if app.return_code:
        return app.return_code
    from magi_tui.live.runner import shell_exit_code

    return shell_exit_code(program.returncode if program is not None else None)


def cmd_bisect(args: argparse.Namespace) -> int:
    """Bisect a wrong or crashing compile (docs/HEADLESS.md): exit 0 when it completed (a culprit or
    "not reproduced"), 1 when it could not run, 2 on a usage error."""
    from magi_tui.bisect_cli import run_bisect_command

    return run_bisect_command(args, print_json=_print_json, fail=_fail)


def cmd_report(args: argparse.Namespace) -> int:
    """A bug-report bundle for a run or a bisect (docs/HEADLESS.md): exit 0 written, 2 unusable input."""
    from magi_tui.bisect_cli import run_report_command

    return run_report_command(args, fail=_fail)


def cmd_fix(args: argparse.Namespace) -> int:
    """Try the fixes and prove them (docs/HEADLESS.md): exit 0 when it completed, 1 when the baseline could
    not run, 2 on a usage error."""
    from magi_tui.fix_cli import run_fix_command

    return run_fix_command(args, print_json=_print_json, fail=_fail)


class _Skipped:
    """What ``add_parser`` gives for a command ``build_parser(only=...)`` leaves out: every call on it (an
    option, a group, defaults) does nothing and answers itself."""

    def __getattr__(self, name: str) -> Any:
        return lambda *args, **kwargs: self


class _HelpFormatter(argparse.HelpFormatter):
    """argparse's, sized to the terminal when it first lays text out rather than when it is made: argparse
    makes one for every option it adds (to check the option's metavar), and sizing imports ``shutil``
    (with ``bz2`` and ``lzma``, on every headless command's start). The widths are argparse's own
    (``shutil.get_terminal_size`` less 2, the help column at most ``max_help_position``)."""

    def __init__(self, prog: str, indent_increment: int = 2, max_help_position: int = 24,
                 width: int | None = None, **kwargs: Any) -> None:
        self._sizes = (indent_increment, max_help_position, width)
        # sizes: the properties below (0 a placeholder that keeps argparse from sizing at once)
        super().__init__(prog, indent_increment, max_help_position, 0, **kwargs)
        self.__dict__.pop("_lazy_width", None)
        self.__dict__.pop("_lazy_help_position", None)

    @property
    def _width(self) -> int:
        if "_lazy_width" not in self.__dict__:
            width = self._sizes[2]
            if width is None:
                import shutil

                width = shutil.get_terminal_size().columns - 2
            self.__dict__["_lazy_width"] = width
        return self.__dict__["_lazy_width"]

    @_width.setter
    def _width(self, value: int) -> None:
        self.__dict__["_lazy_width"] = value

    @property
    def _max_help_position(self) -> int:
        if "_lazy_help_position" not in self.__dict__:
            indent, most, _ = self._sizes
            self.__dict__["_lazy_help_position"] = min(most, max(self._width - 20, indent * 2))
        return self.__dict__["_lazy_help_position"]

    @_max_help_position.setter
    def _max_help_position(self, value: int) -> None:
        self.__dict__["_lazy_help_position"] = value


class _Commands:
    """The subparsers action, each command's parser made with :class:`_HelpFormatter`; with ``only``, the
    named command's parser is made and the others are :class:`_Skipped` (every command's parser and options
    would be made on every start otherwise)."""

    def __init__(self, sub: Any, only: str | None) -> None:
        self._sub, self._only = sub, only

    def add_parser(self, name: str, **kwargs: Any) -> Any:
        if self._only is not None and name != self._only:
            return _Skipped()
        kwargs.setdefault("formatter_class", _HelpFormatter)
        return self._sub.add_parser(name, **kwargs)


def build_parser(only: str | None = None) -> argparse.ArgumentParser:
    """The command line's parser; ``only``: just that command's (``main`` knows which one runs; ``--help``
    of the whole program builds them all)."""
    p = argparse.ArgumentParser(
        prog="magi-tui", formatter_class=_HelpFormatter,
        description="Explore torch.compile runs: event tree, graph diffs, triage. "
                    "PATH is a run dir, a magi_depyf/ root, a cache root or a folder of runs "
                    "(default: ./runs, else the current directory).",
        epilog="The explorer (magi-tui [open] PATH, attach, run) also takes: --ansi (the terminal's own 16 "
               "colours), --no-mouse (leave the mouse to the terminal), --keymap FILE (remap keys: TOML [keys] "
               "id = \"keys\"; default ~/.config/magi-tui/keymap.toml). Each command's --help has its options.",
    )
    p.add_argument("--version", action="version", version=f"magi-tui {__version__}")
    # prog given: argparse would make a help formatter to spell it (and import shutil to size it)
    sub: Any = _Commands(p.add_subparsers(dest="cmd", prog="magi-tui"), only)

    def ui_opts(sp: argparse.ArgumentParser) -> None:
        sp.add_argument("--ansi", action="store_true", help="use the terminal's own 16 colours")
        sp.add_argument("--no-mouse", action="store_true", help="leave the mouse to the terminal")
        sp.add_argument("--keymap", metavar="FILE",
                        help="remap keys (TOML [keys] id = \"keys\"; default ~/.config/magi-tui/keymap.toml)")

    sp = sub.add_parser("open", help="open the explorer (the default command)")
    sp.add_argument("path", nargs="?")
    ui_opts(sp)
    sp.set_defaults(func=cmd_app)

    sp = sub.add_parser("runs", help="list runs under PATH (headless)")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_runs)

    sp = sub.add_parser("triage", help="status, checks, failures, restarts, graph breaks, recompiles, frames, "
                                       "cache and compile time (headless; see docs/HEADLESS.md)",
                        description="Exit 0: no unrecovered failure; 1: an unrecovered failure or an incomplete "
                                    "run; 2: no usable input.")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--json", action="store_true", help="the whole analysis as JSON (never capped)")
    sp.add_argument("--all", action="store_true", help="text output: show every row (lists are capped otherwise)")
    sp.add_argument("--fail-on", metavar="RULES", default="", help=FAIL_ON_HELP)
    sp.add_argument("--against", metavar="ROOT", action="append", default=[],
                    help="also look under ROOT for the earlier run that filled the cache (why a miss missed)")
    sp.set_defaults(func=cmd_triage)

    sp = sub.add_parser("compare", help="run vs run: graph breaks, recompiles, failures, cache, compile time, "
                                        "frames and passes of A against B (headless; see docs/HEADLESS.md)",
                        description="Exit 0: compared; 2: unusable input (A or B is not one run).")
    sp.add_argument("a", metavar="A", help="the first run (a run dir, or a root holding one run)")
    sp.add_argument("b", metavar="B", help="the second run")
    sp.add_argument("--json", action="store_true", help="the whole comparison as JSON (never capped)")
    sp.add_argument("--all", action="store_true", help="text output: show every row")
    sp.set_defaults(func=cmd_compare)

    sp = sub.add_parser("ranks", help="rank vs rank: where the ranks of one job compiled differently (headless)",
                        description="Exit 0: every rank agrees with the lowest; 1: ranks diverge; 2: no job "
                                    "with several ranks under PATH.")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_ranks)

    sp = sub.add_parser("export-trace", help="Chrome trace-event JSON (Perfetto, chrome://tracing): torch's chromium "
                        "events of a log or a run's lifecycle spans, one process per rank",
                        description="Exit 0: written; 1: written but nothing timed was recorded; 2: no run under "
                                    "PATH or the output cannot be written.")
    sp.add_argument("path", help="a TORCH_TRACE log, a folder of per-rank logs, a run dir or a root of runs")
    sp.add_argument("-o", "--output", required=True, help="the trace file to write (- for stdout)")
    sp.add_argument("--source", choices=("auto", "chromium", "spans"), default="auto",
                    help="auto: a log's chromium events where it has them, else lifecycle spans (default)")
    sp.set_defaults(func=cmd_export_trace)

    sp = sub.add_parser("check", help="CI gate: compile budgets from a TOML policy, regressions against a "
                                      "baseline run, JUnit XML (headless)",
                        description="Exit 0: every budget holds; 1: a budget is broken (one line each); "
                                    "2: unusable input (no run, a bad policy, no baseline run).")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--policy", metavar="FILE", help="TOML with a [budget] and/or a [checks] table (see README: Compare "
                    "and CI gate)")
    sp.add_argument("--baseline", metavar="RUN", help="fail on regressions against this run")
    sp.add_argument("--junit", metavar="FILE", help="write JUnit XML, one test case per budget")
    sp.add_argument("--fail-on", metavar="RULES", default="", help=FAIL_ON_HELP.replace("exit 1", "fail the gate")
                    + " (a policy's [checks] fail_on adds to them)")
    sp.add_argument("--against", metavar="ROOT", action="append", default=[],
                    help="also look under ROOT for the earlier run that filled the cache (the cache-misses rule)")
    sp.add_argument("--list-rules", action="store_true", help="print the rule ids --fail-on takes, and exit")
    sp.add_argument("--history", metavar="INDEX", help="also fail on compile time above the band of the index's "
                    "last runs, or a graph break it never saw (magi-tui index)")
    sp.add_argument("--json", action="store_true")
    sp.set_defaults(func=cmd_check)

    sp = sub.add_parser("metrics", help="per compile id: Dynamo / AOT / Inductor / codegen seconds, guards, "
                                        "graph size, restarts, dynamic shapes (headless)")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--json", action="store_true", help="every compile's facts as JSON (phases, stack included)")
    sp.set_defaults(func=cmd_metrics)

    sp = sub.add_parser("serve", help="serve the explorer to a web browser (textual-serve behind a token)",
                        description="Prints a URL with a random token; only a page opened from it can drive the "
                                    "app. WebSockets from other origins or hosts, and sessions past the cap, are "
                                    "refused (one log line each).")
    sp.add_argument("path", nargs="?")
    sp.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1: this machine only)")
    sp.add_argument("--port", type=int, default=8000, help="port (default 8000)")
    sp.add_argument("--allow-host", action="append", default=[], metavar="NAME",
                    help="also accept requests addressed to NAME (a proxy's or tunnel's host name); repeatable")
    sp.add_argument("--max-sessions", type=int, default=4, metavar="N",
                    help="at most N browser sessions (app processes) at once (default 4)")
    sp.add_argument("--certfile", metavar="PEM", help="serve HTTPS/WSS with this certificate (a host other than "
                                                      "loopback without it: the token travels in clear text)")
    sp.add_argument("--keyfile", metavar="PEM", help="the certificate's private key (unless --certfile holds it)")
    sp.set_defaults(func=cmd_serve)

    sp = sub.add_parser("attach", help="follow a compile in progress under PATH")
    sp.add_argument("path", nargs="?", default="runs")
    ui_opts(sp)
    sp.set_defaults(func=cmd_attach)

    if only in (None, "bisect", "report"):
        from magi_tui.bisect_cli import add_parsers

        add_parsers(sub, cmd_bisect, cmd_report)
    if only in (None, "fix"):
        from magi_tui.fix_cli import add_parser as add_fix_parser

        add_fix_parser(sub, cmd_fix)

    if only in (None, "index", "history"):
        from magi_tui.history_cli import add_parsers as add_history_parsers

        add_history_parsers(sub, cmd_index, cmd_history)

    if only in (None, "why"):
        from magi_tui.why_cli import add_parser as add_why_parser

        add_why_parser(sub, cmd_why)

    sp = sub.add_parser("run", help="run a program under the tracer and follow it live")
    sp.add_argument("-o", "--output", default="runs", help="root for the run directory (default ./runs)")
    sp.add_argument("command", nargs=argparse.REMAINDER)
    ui_opts(sp)
    sp.set_defaults(func=cmd_run)
    return p


SUBCOMMANDS = {"open", "runs", "triage", "attach", "run", "compare", "ranks", "check", "serve", "metrics",
               "export-trace", "bisect", "report", "fix", "why", "index", "history"}


#: headless commands whose load, analysis and answer make no garbage cycle worth collecting (``compare`` and
#: ``ranks`` held more memory without the collector): run with it off (:func:`main`)
GC_HELD = frozenset({"triage", "runs", "check", "metrics"})


def main(argv: list[str] | None = None) -> int:
    argv = list(sys.argv[1:] if argv is None else argv)
    if not argv or (argv[0] not in SUBCOMMANDS and argv[0] not in ("-h", "--help", "--version")):
        argv = ["open", *argv]
    args, extra = build_parser(argv[0] if argv[0] in SUBCOMMANDS else None).parse_known_args(argv)
    if extra:  # refused by the whole program's parser, so its usage names every command
        args = build_parser().parse_args(argv)
    try:
        if argv[0] in GC_HELD:
            # a headless report's analysis and answer make no garbage cycle worth collecting: the
            # collector is held off for all of it, as for a load
            from magi_tui.model import collector

            with collector.held():
                return int(args.func(args) or 0)
        return int(args.func(args) or 0)
    except SystemExit as exc:
        return int(exc.code or 0) if isinstance(exc.code, int) else _fail(str(exc.code))
    except KeyboardInterrupt:
        return 130
    except BrokenPipeError:
        return 0
    except Exception as exc:  # the last line of defence: one clear line, never a traceback
        if os.environ.get("MAGI_TUI_DEBUG"):
            raise
        return _fail(f"{type(exc).__name__}: {exc}", 2)


def run() -> None:
    """The console script and ``python -m magi_tui``: :func:`main`, then the process ends with its code."""
    rc = main()
    raise SystemExit(rc)
