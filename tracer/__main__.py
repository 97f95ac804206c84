"""``python -m tracer [-o ROOT] [--label L] script.py [args...]``: run a script unchanged, recorded.

Same ``sys.argv`` for the script, same exit code. The run directory is printed on stderr as
``MAGI_RUN_DIR=<abs path>`` (what ``magi-tui run`` looks for) as soon as it exists.
"""

from __future__ import annotations

import argparse
import os
import runpy
import sys
from pathlib import Path

from magi_format.layout import RUN_DIR_ANNOUNCE


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(prog="python -m tracer", description=__doc__)
    p.add_argument("-o", "--output", default=os.environ.get("MAGI_TRACER_ROOT", "runs"),
                   help="root for run directories (default ./runs)")
    p.add_argument("--label", default=os.environ.get("MAGI_TRACER_LABEL"),
                   help="label in the run dir name (default: the script's name)")
    p.add_argument("--keep-trace", action="store_true", help="also write torch_trace.log for tlparse")
    p.add_argument("script")
    p.add_argument("args", nargs=argparse.REMAINDER)
    ns = p.parse_args(argv)
    script = Path(ns.script)
    if not script.is_file():
        print(f"python -m tracer: no such script: {script}", file=sys.stderr)
        return 2
    from tracer.session import explain_compilation

    sys.argv = [str(script), *ns.args]
    sys.path.insert(0, str(script.resolve().parent))
    code = 0
    with explain_compilation(ns.output, label=ns.label or script.stem, keep_trace=ns.keep_trace) as run:
        if run.path is not None:
            print(f"{RUN_DIR_ANNOUNCE}{run.path.resolve()}", file=sys.stderr, flush=True)
        try:
            runpy.run_path(str(script), run_name="__main__")
        except SystemExit as exc:
            c = exc.code
            code = c if isinstance(c, int) else (0 if c is None else 1)
            if c is not None and not isinstance(c, int):
                print(c, file=sys.stderr)
        except KeyboardInterrupt:
            code = 130
        except BaseException:
            import traceback

            traceback.print_exc()
            code = 1
    if run.path is not None:
        print(f"magi-tui: recorded {run.path} (open it with: magi-tui {run.path})", file=sys.stderr)
    return code


if __name__ == "__main__":
    raise SystemExit(main())
