"""Hooks a trial run asks for through its environment (``magi_tui/live/trial.py``), installed by
``python -m tracer`` before the program starts.

* ``MAGI_TRIAL_PROBE=FILE``: every time torch asks its compiler bisector whether to skip one
  application of a subsystem (a decomposition, a pre/joint/post-grad pass, a lowering), one JSON line
  ``{"backend", "subsystem", "n", "info", "compile_id", "skipped"}`` is appended: ``n`` counts the
  applications of that subsystem from 0, as ``TORCH_BISECT_MAX`` counts them, and ``info`` is the debug
  info torch would show for it (the pass name, the node, the op). One run so gives the number of
  applications of every subsystem and what each one was, with its compile id: torch's own bisector
  needs a run of its own per subsystem for the count (``find_max_bounds``) and writes the debug info only
  for the last two candidates. A first line ``{"versions": ...}`` names torch, Python and the platform.
* ``MAGI_TRIAL_BISECT=["inductor", "post_grad_passes", N]`` (with the probe): applications of that
  subsystem after the N-th are skipped (-1: all), numbered as the probe numbers them. This is what
  ``TORCH_BISECT_BACKEND`` / ``TORCH_BISECT_SUBSYSTEM`` / ``TORCH_BISECT_MAX`` do, through the same
  ``CompilerBisector.disable_subsystem`` calls, without their side effect: ``TORCH_BISECT_BACKEND`` also
  makes every ``torch.compile`` use the bisected backend, so a program that compiles one function with
  ``aot_eager`` and another with Inductor would be changed (and renumbered) by the bisect itself.
* ``MAGI_TRIAL_CONFIG=JSON``: ``{"torch._functorch.config.cse": false, ...}`` set before the program
  runs (a config change to try without editing the program; the program may still set it again).

* ``MAGI_TRIAL_REORDERABLE_LOGGING=builtins.print,...``: callables added to
  ``torch._dynamo.config.reorderable_logging_functions`` (a set of callables: no environment variable of
  torch's can hold it), what ``magi-tui fix`` tries for a ``print`` graph break.

A hook that cannot be installed is one warning on stderr; the program runs on as it would.
"""

from __future__ import annotations

import json
import os
import sys
import threading
from typing import Callable

PROBE_ENV = "MAGI_TRIAL_PROBE"
CONFIG_ENV = "MAGI_TRIAL_CONFIG"
LOGGING_ENV = "MAGI_TRIAL_REORDERABLE_LOGGING"
BISECT_ENV = "MAGI_TRIAL_BISECT"


def _warn(msg: str) -> None:
    try:
        print(f"magi-tui tracer: {msg}", file=sys.stderr, flush=True)
    except Exception:
        pass


def _apply_config(text: str) -> None:
    import importlib

    try:
        patches = json.loads(text)
        if not isinstance(patches, dict):
            raise ValueError("not a JSON object")
    except ValueError as exc:
        _warn(f"{CONFIG_ENV} ignored: {exc}")
        return
    for dotted, value in patches.items():
        parts = str(dotted).split(".")
        try:
            # the longest importable module, then attributes (``torch._inductor.config.test_configs.x``)
            for i in range(len(parts) - 1, 0, -1):
                try:
                    obj = importlib.import_module(".".join(parts[:i]))
                    break
                except ImportError:
                    continue
            else:
                raise ImportError(f"no module in {dotted}")
            for name in parts[i:-1]:
                obj = getattr(obj, name)
            if not hasattr(obj, parts[-1]):
                raise AttributeError(f"{'.'.join(parts[:-1])} has no setting {parts[-1]}")
            setattr(obj, parts[-1], value)
        except Exception as exc:
            _warn(f"{CONFIG_ENV}: cannot set {dotted}: {exc}")


def _add_logging_functions(text: str) -> None:
    import importlib

    import torch._dynamo.config as dynamo_config

    for dotted in [d.strip() for d in text.split(",") if d.strip()]:
        mod, _, name = dotted.rpartition(".")
        try:
            fn = getattr(importlib.import_module(mod or "builtins"), name)
            dynamo_config.reorderable_logging_functions.add(fn)
        except Exception as exc:
            _warn(f"{LOGGING_ENV}: cannot add {dotted}: {exc}")


def _versions() -> dict:
    import platform

    import torch

    return {"torch": torch.__version__, "python": platform.python_version(), "platform": platform.platform(),
            "cuda": getattr(torch.version, "cuda", None)}


def _install_probe(path: str) -> None:
    from torch._guards import CompileContext
    from torch._inductor.compiler_bisector import CompilerBisector

    target: tuple[str, str] | None = None
    limit = -1
    if os.environ.get(BISECT_ENV):
        try:
            b, sub, lim = json.loads(os.environ[BISECT_ENV])
            target, limit = (str(b), str(sub)), int(lim)
        except (ValueError, TypeError):
            _warn(f"{BISECT_ENV} ignored: not [backend, subsystem, max]")
    out = open(path, "a", encoding="utf-8")  # noqa: SIM115  (open for the life of the process)
    lock = threading.Lock()
    counts: dict[tuple[str, str], int] = {}
    original = CompilerBisector.disable_subsystem  # bound to the class

    def write(obj: dict) -> None:
        with lock:
            out.write(json.dumps(obj, default=str) + "\n")
            out.flush()

    try:
        write({"versions": _versions()})
    except Exception as exc:
        write({"versions": {"error": str(exc)}})

    def disable_subsystem(cls: type[CompilerBisector], backend: str, subsystem: str,
                          debug_info: Callable[[], str] | None = None) -> bool:
        key = (str(backend), str(subsystem))
        n = counts.get(key, 0)
        counts[key] = n + 1
        skipped = (n > limit) if key == target else original(backend, subsystem, debug_info)
        try:
            info = debug_info() if debug_info is not None else None
        except Exception as exc:
            info = f"(debug info failed: {type(exc).__name__})"
        try:
            cid = CompileContext.current_compile_id()
        except Exception:
            cid = None
        write({"backend": key[0], "subsystem": key[1], "n": n, "info": info,
               "compile_id": str(cid) if cid is not None else None, "skipped": bool(skipped)})
        return skipped

    # (setattr: a monkeypatch of torch's class for this process, not a method of a subclass)
    setattr(CompilerBisector, "disable_subsystem", classmethod(disable_subsystem))


def install() -> None:
    """Install what the environment asks for (nothing when neither variable is set)."""
    config = os.environ.get(CONFIG_ENV)
    probe = os.environ.get(PROBE_ENV)
    logging_fns = os.environ.get(LOGGING_ENV)
    if not config and not probe and not logging_fns:
        return
    try:
        if config:
            _apply_config(config)
        if logging_fns:
            _add_logging_functions(logging_fns)
        if probe:
            _install_probe(probe)
    except Exception as exc:
        _warn(f"trial hooks not installed: {type(exc).__name__}: {exc}")
