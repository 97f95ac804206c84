"""How the traced program ended, for ``session.json``'s ``outcome`` (docs/FORMAT.md, ours).

A compile can be perfect and the program still die of it: ``fullgraph=True`` or
``fail_on_recompile_limit_hit`` make torch raise into the program, and a compiled graph can crash when it
runs (an index out of bounds in a generated kernel, a stride assert). Nothing in torch's structured trace
says so, so the tracer writes it down at the end: the exit code, an interrupt, and the exception that
reached the program with *where it came from*, read off its traceback:

* ``compile``: torch.compile raised while compiling (a frame of Dynamo's ``convert_frame`` on the way,
  or one of torch's compile exceptions: ``Unsupported`` under ``fullgraph=True``,
  ``FailOnRecompileLimitHit``, ``BackendCompilerFailed``, ``InductorError``);
* ``compiled_code``: raised while a compiled entry ran (one of the code objects Dynamo's bytecode hook
  handed us is on the traceback): ``in_graph`` when what raised under it is torch's (the compiled graph,
  a generated kernel), else the user's own code called from the compiled frame;
* ``program``: anywhere else (not torch.compile's doing).

Pure standard library: it runs inside the user's program and must never raise.
"""

from __future__ import annotations

import os
import sys
import traceback
from types import TracebackType
from typing import Any

#: torch's exceptions that mean "torch.compile failed" (by class name: the tracer imports no torch here)
COMPILE_EXCEPTIONS = frozenset({
    "Unsupported", "FailOnRecompileLimitHit", "BackendCompilerFailed", "InductorError", "TorchRuntimeError",
    "UserError", "UncapturedHigherOrderOpError", "RecompileLimitExceeded", "InternalTorchDynamoError",
    "LoweringException", "SkipFrame", "ObservedException", "TorchDynamoException", "GuardOnDataDependentSymNode",
})
_CONVERT_FRAME = os.path.join("_dynamo", "convert_frame.py")
_TORCH_DIRS = (os.sep + "torch" + os.sep, "torchinductor_")
#: the standard library's folder (``subprocess.py`` is not where the user should look)
_STDLIB = os.path.dirname(os.__file__) + os.sep
MAX_MESSAGE = 4000
MAX_TRACEBACK = 16000


def _frames(tb: TracebackType | None) -> list[tuple[Any, str, int]]:
    out: list[tuple[Any, str, int]] = []
    while tb is not None and len(out) < 2000:
        code = tb.tb_frame.f_code
        out.append((code, code.co_filename, tb.tb_lineno))
        tb = tb.tb_next
    return out


def _is_torch(path: str) -> bool:
    return any(d in path for d in _TORCH_DIRS)


def _is_user(path: str) -> bool:
    return not (_is_torch(path) or "site-packages" in path or path.startswith(_STDLIB) or path.startswith("<")
                or os.sep + "tracer" + os.sep in path)


def describe_exception(exc: BaseException, compiled: dict[int, str]) -> dict[str, Any]:
    """The ``exception`` object of the outcome: type, message, origin (see the module's docstring), the
    compile id of the compiled entry it left (``compiled_code``), the innermost user line (``file``,
    ``line``: outside torch and site-packages), the user's line that called that entry (``call_file``,
    ``call_line``) and the formatted traceback."""
    frames = _frames(exc.__traceback__)
    cls = type(exc)
    entry: str | None = None
    after: list[str] = []
    call: tuple[str, int] | None = None   # the user's line that called the (innermost) compiled entry
    last_user: tuple[str, int] | None = None
    for code, path, line in frames:
        cid = compiled.get(id(code))
        if cid is not None:
            entry, after, call = cid, [], last_user
        elif entry is not None:
            after.append(path)
        if _is_user(path):
            last_user = (path, line)
    compiling = any(p.endswith(_CONVERT_FRAME) for p in (after if entry is not None else
                                                           [p for _c, p, _l in frames]))
    torch_exc = cls.__module__.startswith("torch.") and cls.__name__ in COMPILE_EXCEPTIONS
    if compiling or (torch_exc and entry is None):
        origin = "compile"
    elif entry is not None:
        origin = "compiled_code"
    else:
        origin = "program"
    user = [(p, ln) for _c, p, ln in frames if _is_user(p)]
    try:
        message = str(exc)
    except Exception:
        message = "(its message could not be read)"
    try:
        text = "".join(traceback.format_exception(cls, exc, exc.__traceback__))
    except Exception:
        text = ""
    return {"type": f"{cls.__module__}.{cls.__qualname__}" if cls.__module__ != "builtins" else cls.__qualname__,
            "message": message[:MAX_MESSAGE], "origin": origin, "compile_id": entry,
            "in_graph": bool(origin == "compiled_code" and any(_is_torch(p) for p in after)),
            "file": user[-1][0] if user else None, "line": user[-1][1] if user else None,
            "call_file": call[0] if call else None, "call_line": call[1] if call else None,
            "traceback": text[-MAX_TRACEBACK:]}


def outcome(exit_code: int | None, exc: BaseException | None, compiled: dict[int, str],
            ended_by: str) -> dict[str, Any]:
    """The ``outcome`` object: ``ended_by`` (``program``: ``python -m tracer`` saw it exit; ``block``: an
    ``explain_compilation`` block ended, the program's exit code is not known there), ``exit_code`` (None
    when not known), ``interrupted`` (Ctrl-C: a ``KeyboardInterrupt``), ``exception`` (see
    :func:`describe_exception`) or None, ``script`` (``python -m tracer``'s script, never its arguments)."""
    interrupted = isinstance(exc, KeyboardInterrupt)
    described = None
    if exc is not None and not isinstance(exc, SystemExit):
        try:
            described = describe_exception(exc, compiled)
        except Exception:
            described = {"type": type(exc).__name__, "message": "", "origin": "program", "compile_id": None,
                         "in_graph": False, "file": None, "line": None, "call_file": None, "call_line": None,
                         "traceback": ""}
    script = sys.argv[0] if ended_by == "program" and sys.argv else None  # the script alone: arguments may hold secrets
    return {"ended_by": ended_by, "exit_code": exit_code, "interrupted": interrupted, "exception": described,
            "script": script}
