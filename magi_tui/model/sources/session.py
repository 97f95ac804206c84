"""Did the tracer close the run? Its ``timeline_events/session.json`` (docs/FORMAT.md, ours) says who writes
the run and whether that writer finished: a program killed after its last compile closed leaves every
lifecycle closed, so only this record tells the run was cut short. Upstream runs, logs and debug folders have
no such record: nothing is concluded for them."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

from msgspec import Meta, Struct

from magi_format.layout import SESSION_FILE, TIMELINE_DIR
from magi_tui.model.sources.safejson import Int, JsonProblem, decode, read_bounded

_LIMIT = 65536  # ~120 bytes, or up to ~25 KB with an outcome's traceback: anything longer is not ours


class ProgramException(Struct, frozen=True):
    """The exception that reached the program (``tracer/outcome.py``): ``origin`` ``compile`` (torch.compile
    raised while compiling), ``compiled_code`` (raised while a compiled entry ran; ``in_graph``: inside
    torch's compiled graph), ``program`` (elsewhere)."""

    type: str
    message: str
    origin: str
    compile_id: str | None = None
    in_graph: bool = False
    file: str | None = None
    line: int | None = None
    call_file: str | None = None
    call_line: int | None = None
    traceback: str = ""

    @property
    def short_type(self) -> str:
        return self.type.rsplit(".", 1)[-1]

    def as_json(self) -> dict[str, object]:
        return {"type": self.type, "message": self.message, "origin": self.origin, "compile_id": self.compile_id,
                "in_graph": self.in_graph, "file": self.file, "line": self.line, "call_file": self.call_file,
                "call_line": self.call_line}


class Outcome(Struct, frozen=True):
    """How the traced program ended: ``ended_by`` ``program`` (``python -m tracer`` saw it exit: ``exit_code``)
    or ``block`` (an ``explain_compilation`` block ended: the exit code is not known there)."""

    ended_by: str
    exit_code: int | None
    interrupted: bool
    exception: ProgramException | None
    script: str | None = None

    @property
    def torch_failed(self) -> bool:
        """An exception of torch.compile's, or one that left a compiled entry, reached the program (Ctrl-C's
        ``KeyboardInterrupt`` is not one: the run is ``interrupted``)."""
        return (not self.interrupted and self.exception is not None
                and self.exception.origin in ("compile", "compiled_code"))

    def headline(self) -> str | None:
        """A few words for a title bar when the program did not end well (None when it did)."""
        e = self.exception
        if self.interrupted:
            return "interrupted (Ctrl-C)"
        if e is not None and e.origin == "compiled_code":
            return f"crashed at run time: {e.short_type}"
        if e is not None and e.origin == "compile":
            return f"torch.compile raised {e.short_type}"
        if e is not None:
            return f"the program raised {e.short_type}"
        if self.exit_code not in (0, None):
            return f"exited {self.exit_code}"
        return None

    def as_json(self) -> dict[str, object]:
        return {"recorded": True, "ended_by": self.ended_by, "exit_code": self.exit_code,
                "interrupted": self.interrupted, "script": self.script,
                "exception": self.exception.as_json() if self.exception is not None else None}


class DroppedRecord(Struct, frozen=True):
    """One record the tracer dropped (a hook or its mapping raised on it; the recording went on)."""

    where: str
    error: str
    record: str | None


class TracerInfo(Struct, frozen=True):
    """What the tracer says of its own recording (``session.json``'s ``tracer``): the torch it ran with, what
    that torch gave it no hook for (``not_recorded``), and the records it dropped (an exact count, the first
    errors)."""

    torch: str | None
    not_recorded: tuple[str, ...]
    dropped_records: int
    drop_errors: tuple[DroppedRecord, ...]


class SessionRecord(Struct, frozen=True):
    pid: int | None
    host: str | None
    started: float | None
    ended: float | None
    outcome: Outcome | None = None
    tracer: TracerInfo | None = None

    def writer_alive(self) -> bool | None:
        """Whether the writing process still runs: None when it cannot be told (another host, no pid)."""
        import socket  # here: the headless commands never ask, and its import would be paid by their start

        if self.pid is None or self.host != socket.gethostname():
            return None
        try:
            os.kill(self.pid, 0)
        except ProcessLookupError:
            return False
        except PermissionError:
            return True
        except OSError:
            return None
        return True

    def cut_short(self) -> str | None:
        """Why the run is incomplete by this record, or None: no end written and its writer is gone (or on
        another machine, where it cannot be asked)."""
        if self.ended is not None:
            return None
        alive = self.writer_alive()
        if alive:
            return None
        where = f" (pid {self.pid} on {self.host})" if self.pid is not None else ""
        return ("the program ended without closing the run (no end-of-session record): it was killed or "
                f"crashed hard{where}" if alive is False else
                f"the run has no end-of-session record and its program{where} cannot be asked here: it "
                "was killed, or it still runs on that machine")


# -- session.json, read back: typed and bounded (issue 32.6) -------------------------------------------------
class _ExceptionFile(Struct):
    type: str | None = None
    message: str | None = None
    origin: str | None = None
    compile_id: str | None = None
    in_graph: bool | None = None
    file: str | None = None
    line: Int | None = None
    call_file: str | None = None
    call_line: Int | None = None
    traceback: str | None = None


class _OutcomeFile(Struct):
    ended_by: str | None = None
    exit_code: Int | None = None
    interrupted: bool | None = None
    exception: _ExceptionFile | None = None
    script: str | None = None


class _DropFile(Struct):
    where: str | None = None
    error: str | None = None
    record: str | None = None


class _TracerFile(Struct):
    torch: str | None = None
    not_recorded: Annotated[list[str], Meta(max_length=1000)] = []
    dropped_records: Int | None = None
    drop_errors: Annotated[list[_DropFile], Meta(max_length=1000)] = []


class SessionFile(Struct):
    """``session.json`` as the tracer writes it (``tracer/writer.py``, ``tracer/outcome.py``): each field of its
    type, or the file is not read."""

    writer: str | None = None
    pid: Int | None = None
    host: str | None = None
    started: float | None = None
    ended: float | None = None
    outcome: _OutcomeFile | None = None
    tracer: _TracerFile | None = None


def _cut(v: str | None, limit: int) -> str | None:
    return None if v is None else v[:limit]


def _outcome(o: _OutcomeFile | None) -> Outcome | None:
    """The record's ``outcome`` (a damaged or hostile file gives None, never a raise)."""
    if o is None or o.ended_by is None:
        return None
    exc = o.exception
    pe = None
    if exc is not None and exc.type:
        origin = exc.origin or "program"
        pe = ProgramException(
            exc.type[:300], _cut(exc.message, 4000) or "",
            origin if origin in ("compile", "compiled_code", "program") else "program",
            _cut(exc.compile_id, 100), exc.in_graph is True, _cut(exc.file, 2000), exc.line,
            _cut(exc.call_file, 2000), exc.call_line, _cut(exc.traceback, 20000) or "")
    return Outcome(o.ended_by[:40] or "?", o.exit_code, o.interrupted is True, pe, _cut(o.script, 2000))


def _tracer(t: _TracerFile | None) -> TracerInfo | None:
    """The record's ``tracer`` object (absent in runs of an older tracer)."""
    if t is None:
        return None
    drops = tuple(DroppedRecord((d.where or "?")[:200], (d.error or "")[:1000], _cut(d.record, 200))
                  for d in t.drop_errors[:20])
    n = t.dropped_records if t.dropped_records is not None and t.dropped_records >= 0 else len(drops)
    return TracerInfo(_cut(t.torch, 100), tuple(x[:500] for x in t.not_recorded[:50]), n, drops)


def read_session(run_dir: Path) -> SessionRecord | None:
    """The run's session record, or None when it has none, or not one of ours (nor a readable one: over
    :data:`_LIMIT` bytes, nested too deep, a field of another type)."""
    try:
        rec = decode(read_bounded(run_dir / TIMELINE_DIR / SESSION_FILE, _LIMIT, run_dir), SessionFile)
    except JsonProblem:
        return None
    if rec.writer != "magi-tui tracer":
        return None
    pid = rec.pid if rec.pid is not None and 0 < rec.pid < 2**31 else None  # (os.kill takes no bigger one)
    return SessionRecord(pid, rec.host, rec.started, rec.ended, _outcome(rec.outcome), _tracer(rec.tracer))
