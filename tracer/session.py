"""``explain_compilation``: record every ``torch.compile`` inside a block into one run directory.

Layout (FORMAT.md B1): ``ROOT/magi_depyf/run_<YYYYmmdd_HHMMSS>[_<n>]/model_<i>_<label>_rank_<r>/``.
Entering attaches the trace handler and Dynamo's bytecode hook; leaving flushes the writer, closes
lifecycles the block left open, writes ``compiled_functions/`` and detaches (only our handlers).
A nested ``explain_compilation`` records into the outer run (one run per process and rank).
A run that cannot be created, or a disk that says no, is one warning; the program runs on unrecorded.
A hook that meets something it cannot handle drops that one record (counted, with its error, in
``session.json``'s ``tracer`` object); a hook this torch lacks is not attached, and ``tracer.not_recorded``
says what the run therefore lacks. Neither ever reaches the program.
"""

from __future__ import annotations

import itertools
import os
import socket
import sys
import threading
import time
import types
import warnings
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterator

from magi_format.layout import RUNS_ROOT_DIR, TIMELINE_DIR, TORCH_TRACE_FILE, session_record
from magi_format.runname import model_dir_name, run_id_name
from magi_format.torch_mapping import TraceMapper
from magi_format.torch_records import UserEvent
from tracer import capture
from tracer.compiled_functions import write_compiled_functions
from tracer.context import compile_ids, compile_scope  # noqa: F401  (re-exported: tracer.session.compile_scope)
from tracer.runtime import RuntimeCounters
from tracer.writer import BackgroundWriter, RunWriter, TracerWarning, write_runtime

if TYPE_CHECKING:
    import logging

    from torch.utils.hooks import RemovableHandle

_lock = threading.RLock()
_active: list["Session"] = []
_model_counter = itertools.count(1)


def current() -> "Session | None":
    """The innermost active session (what lifecycle helpers record into)."""
    return _active[-1] if _active else None


def detect_rank() -> int:
    try:
        import torch.distributed as dist

        if dist.is_available() and dist.is_initialized():
            return int(dist.get_rank())
    except Exception:
        pass
    try:
        return int(os.environ.get("RANK", "0"))
    except ValueError:
        return 0


def default_label() -> str:
    argv0 = sys.argv[0] if sys.argv and sys.argv[0] not in ("", "-c", "-m") else ""
    return Path(argv0).stem if argv0 else "run"


def new_run_dir(root: Path, label: str, rank: int) -> Path:
    """A fresh ``run_<ts>[_<n>]/model_<i>_<label>_rank_<r>`` under ``root/magi_depyf``."""
    base = root / RUNS_ROOT_DIR
    stamp = time.strftime("%Y%m%d_%H%M%S")
    model = model_dir_name(next(_model_counter), label, rank)
    for n in itertools.count(0):
        run = base / run_id_name(stamp, n)
        target = run / model
        try:
            target.mkdir(parents=True, exist_ok=False)
            return target
        except FileExistsError:
            continue
    raise AssertionError("unreachable")


def _torch_version() -> str | None:
    try:
        return str(sys.modules["torch"].__version__)
    except Exception:
        return None


def _set_provenance_level(level: Any) -> Any:
    """Set ``torch._inductor.config.trace.provenance_tracking_level``; returns the value it had (None if
    this torch has no such setting)."""
    try:
        from torch._inductor import config

        old = config.trace.provenance_tracking_level
        config.trace.provenance_tracking_level = level
        return old
    except Exception:
        return None


class Session:
    """One recording: a run dir, its writer thread, and what is attached to torch."""

    def __init__(self, root: str | os.PathLike[str], label: str | None = None, *, keep_trace: bool = False,
                 compiled_functions: bool = True, provenance: bool = False, loop_ir: bool = False) -> None:
        self.root = Path(root)
        self.provenance = provenance
        self.loop_ir = loop_ir
        self._loop_ir: list[tuple[str, logging.Handler, int]] = []
        self._started = 0.0
        self._saved_provenance: Any = None
        self.label = label or default_label()
        self.keep_trace = keep_trace
        self.want_compiled_functions = compiled_functions
        self.path: Path | None = None
        self.writer: BackgroundWriter | None = None
        self._handlers: list[tuple[str, logging.Handler]] = []
        self._hook: RemovableHandle | None = None
        self.codes: list[tuple[Any, Any]] = []
        self.depth = 0
        self.mapper: TraceMapper | None = None
        self.runtime: RuntimeCounters | None = None
        self._cache_components: Any = None
        self._perf_hints: list[tuple[logging.Logger, int, logging.Filter]] = []
        #: id of each code object a compiled entry runs (Dynamo's, and ours with the runtime taps) -> its
        #: compile id: what tells an exception that left a compiled entry (:mod:`tracer.outcome`)
        self.compiled_codes: dict[int, str] = {}
        #: how the program ended (``session.json``'s ``outcome``), set just before :meth:`stop`
        self.outcome: dict[str, Any] | None = None
        #: what this run lacks because this torch lacks a hook (``session.json``'s ``tracer.not_recorded``)
        self.not_recorded: list[str] = []

    @property
    def active(self) -> bool:
        return self.writer is not None and not self.writer.failed

    def start(self) -> None:
        try:
            self.path = new_run_dir(self.root, self.label, detect_rank())
            self.mapper = TraceMapper(framework_paths=capture.framework_paths())
            self.writer = BackgroundWriter(RunWriter(self.path), self.mapper.events)
            self._started = time.time()
            self._write_session(None)
        except Exception as exc:
            warnings.warn(f"magi-tui tracer: cannot create a run under {self.root}: {exc}; "
                          "the program runs unrecorded", TracerWarning, stacklevel=3)
            self.writer = None
            return
        self.mapper.strings.update(capture.seed_strings())
        trace_path = self.path / TIMELINE_DIR / TORCH_TRACE_FILE if self.keep_trace else None
        try:
            self._handlers = capture.attach(self.writer, trace_path, None)
        except Exception as exc:  # (nothing is recorded without it: the run says why, the program runs on)
            self._lacks("torch's structured trace (no events)", exc)
            return
        if trace_path is not None and len(self._handlers) < 3:
            self._lacks("torch_trace.log (--keep-trace: torch has no TorchLogsFormatter)")
        try:
            runtime = RuntimeCounters(capture.framework_paths())
            if runtime.attach():
                self.runtime = runtime
                for _, h in self._handlers:
                    if hasattr(h, "runtime"):
                        h.runtime = runtime
            else:
                self._lacks("cache lookups and eager calls (runtime.json: torch has no set_guard_complete_hook)")
        except Exception as exc:
            self._lacks("cache lookups and eager calls (runtime.json)", exc)
        for what, attach in (("AOTAutograd's cache key components", self._attach_cache_components),
                             ("Inductor's performance hints", self._attach_perf_hints),
                             ("compiled functions and calls per compiled entry (compiled_functions/, "
                              "runtime.json)", self._attach_bytecode_hook)):
            try:
                attach()
            except Exception as exc:
                self._lacks(what, exc)
        if self.provenance:
            self._saved_provenance = _set_provenance_level(1)
            if self._saved_provenance is None:
                self._lacks("Inductor provenance (--provenance: torch has no provenance_tracking_level)")
        if self.loop_ir:
            try:
                self._loop_ir = capture.attach_loop_ir(self.writer)
            except Exception as exc:
                self._lacks("Inductor's loop IR (--loop-ir)", exc)
        if self.not_recorded:
            self._write_session(None)  # (what this run lacks, said from its start)

    def _lacks(self, what: str, exc: BaseException | None = None) -> None:
        """This torch lacks a hook the tracer uses (or attaching it raised): the run records less, and says
        what (``session.json``'s ``tracer.not_recorded``)."""
        self.not_recorded.append(what if exc is None else f"{what}: {type(exc).__name__}: {exc}"[:500])

    def _attach_cache_components(self) -> None:
        self._cache_components = capture.attach_cache_components()

    def _attach_perf_hints(self) -> None:
        assert self.writer is not None, "start() attaches hooks only once the writer exists"
        self._perf_hints = capture.attach_perf_hints(self.writer)

    def tracer_record(self) -> dict[str, Any]:
        """``session.json``'s ``tracer`` object: the torch it ran with, what it could not record on it, and
        the records it dropped (count and first errors)."""
        rec: dict[str, Any] = {"torch": _torch_version(), "not_recorded": list(self.not_recorded)}
        if self.writer is not None:
            rec.update(self.writer.drops())
        return rec

    def _write_session(self, ended: float | None) -> None:
        """Open / close the run's session record (its absence of an end marks a killed program's run)."""
        if self.writer is None:  # (no run: nothing to write the record into)
            return
        try:
            rec = session_record(os.getpid(), socket.gethostname(), self._started, ended,
                                 self.outcome if ended is not None else None)
            rec["tracer"] = self.tracer_record()
            self.writer.writer.write_session(rec)
        except Exception:  # a run without the record reads as an upstream one: never break the program
            pass

    def _attach_bytecode_hook(self) -> None:
        from torch._dynamo.convert_frame import register_bytecode_hook

        codes = self.codes
        runtime = self.runtime
        writer = self.writer
        assert writer is not None, "start() attaches hooks only once the writer exists"
        compiled = self.compiled_codes

        def hook(code: types.CodeType, new_code: types.CodeType) -> types.CodeType | None:
            try:
                codes.append((code, new_code))  # (held: the ids below stay theirs)
                ids = compile_ids()
                cid = f"{ids.get('frame_id')}/{ids.get('frame_compile_id')}" if ids else "?"
                compiled[id(new_code)] = cid
                if runtime is None:
                    return None
                out = runtime.instrument(code, new_code, ids)
                if out is not None:
                    compiled[id(out)] = cid
                return out
            except Exception as exc:  # Dynamo's code stays as it is; this entry is not counted
                writer.drop("bytecode_hook", exc, None)
                return None

        self._hook = register_bytecode_hook(hook)

    def emit(self, name: str, attrs: dict[str, Any], files: dict[str, str] | None = None) -> None:
        """A lifecycle / point event from user code, tagged with the compile it happens in."""
        if self.writer is None:
            return
        try:
            ids = compile_ids()
            if ids is not None and "compile_id" not in attrs:
                cid = f"{ids['frame_id']}/{ids['frame_compile_id']}"
                attrs = {**attrs, "compile_id": cid, "attempt": ids.get("attempt", 0)}
            self.writer.submit(UserEvent(name, attrs, files or {}, time.time()))
        except Exception as exc:
            self.writer.drop("emit", exc, None)

    def drop(self, where: str, exc: BaseException, record: Any = None) -> None:
        """One record lost to what a hook or a lifecycle helper could not handle (counted in ``session.json``;
        see ``BackgroundWriter.drop``). Never raises; nothing to count without a run."""
        if self.writer is not None:
            self.writer.drop(where, exc, record)

    def note_end(self, exit_code: int | None, exc: BaseException | None, ended_by: str) -> None:
        """Remember how the program (or the block) ended, for the session record; the first note wins (the
        outermost caller that knows more, ``python -m tracer``, notes first)."""
        if self.outcome is not None:
            return
        try:
            from tracer.outcome import outcome

            self.outcome = outcome(exit_code, exc, self.compiled_codes, ended_by)
        except Exception:
            pass

    def flush(self) -> None:
        if self.writer is not None:
            self.writer.flush()

    def stop(self) -> None:
        if self.writer is None or self.path is None:  # (start() sets the path before the writer)
            return
        writer = self.writer
        try:
            capture.detach(self._handlers)
        except Exception:
            pass
        try:
            capture.detach_cache_components(self._cache_components)
            capture.detach_perf_hints(self._perf_hints)
        except Exception:
            pass
        self._cache_components = None
        self._perf_hints = []
        if self._loop_ir:
            try:
                capture.detach_loop_ir(self._loop_ir)
            except Exception:
                pass
            self._loop_ir = []
        if self._saved_provenance is not None:
            _set_provenance_level(self._saved_provenance)
            self._saved_provenance = None
        if self._hook is not None:
            try:
                self._hook.remove()
            except Exception:
                pass
        if self.runtime is not None:
            self.runtime.detach()
        self.writer.flush()
        if self.mapper is not None and not self.writer.failed:
            try:  # what still waits for a record that will not come (e.g. a failure without metrics)
                for spec in self.mapper.finish():
                    self.writer.writer.write(*spec)
            except OSError as exc:
                self.writer.fail(exc)
            except Exception as exc:
                self.writer.drop("finish", exc, None)
        if self.runtime is not None and not self.writer.failed:
            try:
                write_runtime(self.path, self.runtime.snapshot())
            except OSError as exc:
                self.writer.fail(exc)
            except Exception as exc:
                self.writer.drop("runtime.json", exc, None)
        if self.want_compiled_functions and self.codes and not self.writer.failed:
            try:
                write_compiled_functions(self.path, self.codes,
                                         self.runtime.originals if self.runtime is not None else None,
                                         lambda exc, name: writer.drop("compiled_functions", exc, name))
            except OSError as exc:
                self.writer.fail(exc)
            except Exception as exc:
                self.writer.drop("compiled_functions", exc, None)
        self.writer.close()
        self._write_session(time.time())


@contextmanager
def explain_compilation(root: str | os.PathLike[str] = "runs", label: str | None = None, *,
                        keep_trace: bool = False, compiled_functions: bool = True,
                        provenance: bool = False, loop_ir: bool = False) -> Iterator[Session]:
    """Record every torch.compile in the block; ``as s`` gives the session (``s.path`` is the run).

    ``provenance``: turn on torch's Inductor provenance tracking for the block (kernel -> post-grad
    nodes -> pre-grad nodes and user lines); ``loop_ir``: record Inductor's loop IR before and after
    fusion (a ``fusion`` lifecycle per graph, so ``d`` diffs them). Both off by default: they cost compile
    time."""
    with _lock:
        outer = current()
        if outer is not None:
            outer.depth += 1
            session = outer
        else:
            session = Session(root, label, keep_trace=keep_trace, compiled_functions=compiled_functions,
                              provenance=provenance, loop_ir=loop_ir)
            session.start()
            _active.append(session)
    try:
        yield session
    except BaseException as exc:
        if session is not outer and not isinstance(exc, GeneratorExit):
            session.note_end(None, exc, "block")
        raise
    finally:
        if session is not outer:
            session.note_end(None, None, "block")
        with _lock:
            if session is outer:
                session.depth -= 1
            else:
                _active.remove(session)
                session.stop()
