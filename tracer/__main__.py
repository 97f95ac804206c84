"""``python -m tracer [-o ROOT] [--label L] script.py [args...]``: run a script unchanged, recorded.

The script runs as plain ``python script.py`` would run it: in a fresh ``__main__`` module, with the
``__file__`` CPython sets (the path as given, made absolute by prefixing the working directory, not
normalised), the same ``sys.argv``, ``sys.path[0]`` = the script's real directory, the same uncaught-
exception traceback (no tracer or runpy frames; through ``sys.excepthook``), the same exit status
(``SystemExit`` codes, 1 for an exception, death by SIGINT for Ctrl-C) and the same stdout/stderr. The
only addition is ``MAGI_RUN_DIR=<abs path>`` on stderr as soon as the run directory exists (what
``magi-tui run`` looks for). ``MAGI_TRIAL_PROBE`` / ``MAGI_TRIAL_CONFIG`` install the hooks of
:mod:`tracer.trial_hooks` (what ``magi-tui bisect`` uses).
"""

from __future__ import annotations

import argparse
import os
import sys
import types

from magi_format.layout import RUN_DIR_ANNOUNCE


def _main_file(script: str) -> str:
    """What CPython 3.11 sets as ``__main__.__file__`` for ``python script``: ``os.getcwd()`` joined with
    the argument as typed (``./x.py`` stays ``/cwd/./x.py``), an absolute argument unchanged."""
    return script if os.path.isabs(script) else os.path.join(os.getcwd(), script)


def _user_traceback(tb: types.TracebackType | None, code: types.CodeType) -> types.TracebackType | None:
    """The traceback from the script's own module frame down (what the user sees without the tracer)."""
    t = tb
    while t is not None and t.tb_frame.f_code is not code:
        t = t.tb_next
    return t if t is not None else tb


def _run_as_main(script: str, argv: list[str]) -> tuple[types.CodeType, dict]:
    """Compile the script as ``python script`` does; returns (code, globals of the new __main__)."""
    from importlib.machinery import SourceFileLoader

    path = _main_file(script)
    with open(script, "rb") as f:
        source = f.read()
    code = compile(source, path, "exec", dont_inherit=True)
    module = types.ModuleType("__main__")
    g = module.__dict__
    g.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path), __spec__=None,
             __package__=None, __annotations__={}, __builtins__=sys.modules["builtins"])
    sys.modules["__main__"] = module
    sys.argv = [script, *argv]
    sys.path[0] = os.path.dirname(os.path.realpath(script))
    return code, g


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tracer", description=__doc__,
                                formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("-o", "--output", default=os.environ.get("MAGI_TRACER_ROOT", "runs"),
                   help="root for run directories (default ./runs)")
    p.add_argument("--label", default=os.environ.get("MAGI_TRACER_LABEL"),
                   help="label in the run dir name (default: the script's name)")
    p.add_argument("--keep-trace", action="store_true", help="also write torch_trace.log for tlparse")
    p.add_argument("--provenance", action="store_true",
                   help="turn on Inductor's provenance tracking: kernel -> post-grad -> pre-grad nodes (slower)")
    p.add_argument("--loop-ir", action="store_true",
                   help="record Inductor's loop IR before and after fusion (d diffs them; slower)")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    script: str = ns.script
    if not os.path.isfile(script):
        print(f"python -m tracer: no such script: {script}", file=sys.stderr)
        return 2
    from tracer.session import explain_compilation  # (all of the tracer, before sys.path[0] is the script's)
    from tracer.trial_hooks import install as install_trial_hooks

    install_trial_hooks()  # what a bisect's trial asks for (MAGI_TRIAL_*); nothing otherwise

    try:
        code, g = _run_as_main(script, list(ns.args))
    except SyntaxError as exc:  # as python reports it: no tracer frames, exit status 1
        exc.__traceback__ = None
        sys.excepthook(type(exc), exc, None)
        return 1
    label = ns.label or os.path.splitext(os.path.basename(script))[0]
    status: int | None = 0
    exc_info = None
    with explain_compilation(ns.output, label=label, keep_trace=ns.keep_trace, provenance=ns.provenance,
                             loop_ir=ns.loop_ir) as run:
        if run.path is not None:
            print(f"{RUN_DIR_ANNOUNCE}{run.path.resolve()}", file=sys.stderr, flush=True)
        try:
            exec(code, g)
        except SystemExit as exc:
            c = exc.code
            if c is None:
                status = 0
            elif isinstance(c, int):
                status = c
            else:  # python prints the object and exits 1
                status = 1
                try:
                    print(c, file=sys.stderr)
                except Exception:
                    pass
        except BaseException as exc:
            run.note_end(None if isinstance(exc, KeyboardInterrupt) else 1, exc, "program")
            tb = _user_traceback(exc.__traceback__, code)
            exc.__traceback__ = tb
            exc_info = (type(exc), exc, tb)
            status = None
        if exc_info is None:
            run.note_end(status, None, "program")
    if exc_info is not None:
        sys.excepthook(*exc_info)
        if issubclass(exc_info[0], KeyboardInterrupt):  # python dies of SIGINT after the traceback
            import signal

            sys.stdout.flush()
            sys.stderr.flush()
            signal.signal(signal.SIGINT, signal.SIG_DFL)
            os.kill(os.getpid(), signal.SIGINT)
        return 1
    return status if status is not None else 1


if __name__ == "__main__":
    raise SystemExit(main())
