"""Writing a run directory: ``timeline_events/timeline.jsonl`` plus one folder per event with files.

Every event is one ``os.write`` of one ``\\n``-terminated line on an ``O_APPEND`` descriptor (so a
reader never sees half a line except while that single write is in flight, and a killed process
leaves a valid prefix), written *before* the event's folder. Each file of the folder (``attributes.json``
included) is written whole under a temporary name beside it and renamed into place, so a reader never
sees a 0-byte or half file. Writing happens on one background thread fed by a queue, so the compiling
thread only enqueues; ordering is the queue's order. :meth:`BackgroundWriter.write_through` writes what is
queued from the calling thread, before it returns: the capture calls it on a compile's closing record, so
a program that calls ``os._exit`` right after a compile (no atexit, no writer thread) keeps that compile
closed.

Two kinds of error, neither of which ever reaches the user's program:

* the disk says no (an ``OSError`` from a write: disk full, unwritable root): one warning and recording
  stops. The last line it still tries to write is a ``tracer_stopped`` point event (``reason``, ``error``),
  so a reader knows the run is incomplete.
* anything else (a hook or the mapping meets a record it cannot handle: a bug of ours, a torch that
  changed a record's shape): that one record is dropped (:meth:`BackgroundWriter.drop`) and the recording
  goes on. The run's ``session.json`` counts them (``tracer.dropped_records``) with the first errors
  (``tracer.drop_errors``: where, the error, the record's kind).

Importable without torch.
"""

from __future__ import annotations

import collections
import errno
import json
import os
import threading
import time
import warnings
from pathlib import Path
from typing import Any, Callable, Iterable

from magi_format.layout import (
    FILES_DIR,
    RUNTIME_FILE,
    SESSION_FILE,
    TIMELINE_DIR,
    TIMELINE_FILE,
    event_folder_name,
    timeline_record,
)
from magi_format.names import TRACER_STOPPED, point_event, scope_attrs
from magi_format.text import json_safe
from magi_format.torch_records import EventSpec, Record, UserEvent


def write_runtime(run_dir: Path, data: dict[str, Any]) -> None:
    """``runtime.json`` (calls and seconds per compiled entry), written whole then renamed into place, so
    a reader never sees half of it."""
    tmp = Path(run_dir) / (RUNTIME_FILE + ".tmp")
    tmp.write_text(json.dumps(json_safe(data), indent=1), encoding="utf-8")
    os.replace(tmp, Path(run_dir) / RUNTIME_FILE)


def write_whole(path: Path, text: str) -> None:
    """``text`` (UTF-8, unencodable characters replaced) at ``path``, whole or not at all: written under a
    temporary name in the same folder (``.<name>.<pid>.tmp``), then renamed over ``path``."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        with open(tmp, "w", encoding="utf-8", errors="replace") as f:
            f.write(text)
        os.replace(tmp, path)
    except BaseException:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise


class TracerWarning(UserWarning):
    """The tracer had a problem of its own; the program's results are unaffected."""


class RunWriter:
    """Synchronous writer of one run directory (thread-safe)."""

    def __init__(self, run_dir: str | os.PathLike[str]) -> None:
        self.run_dir = Path(run_dir)
        self.events_dir = self.run_dir / TIMELINE_DIR
        self.events_dir.mkdir(parents=True, exist_ok=True)
        self._fd: int | None = None
        self._index = 0
        self._t0: float | None = None
        self._lock = threading.Lock()

    @property
    def count(self) -> int:
        return self._index

    def write(self, name: str, attrs: dict[str, Any], files: dict[str, str] | None = None,
              timestamp: float | None = None) -> int:
        files = files or {}
        with self._lock:
            ts = time.time() if timestamp is None else timestamp
            if self._t0 is None:
                self._t0 = ts
            index = self._index
            attrs = json_safe(attrs)
            obj = timeline_record(index, name, list(files), attrs, ts, self._t0)
            line = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
            if self._fd is None:
                self._fd = os.open(self.events_dir / TIMELINE_FILE,
                                   os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, line)
            self._index += 1  # (only once the line is written: a dropped event leaves no gap in the indices)
            if files:
                self._write_folder(index, name, attrs, files)
            return index

    def _write_folder(self, index: int, name: str, attrs: Any, files: dict[str, str]) -> None:
        folder = self.events_dir / FILES_DIR / event_folder_name(index, name)
        sub = attrs.get("subgraph") if isinstance(attrs, dict) else None
        if isinstance(sub, str) and sub and "/" not in sub and sub not in (".", ".."):
            folder = folder / sub
        folder.mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            write_whole(folder / os.path.basename(fname), text)
        write_whole(folder / "attributes.json", json.dumps(attrs, indent=2, ensure_ascii=False))

    def write_session(self, record: dict[str, Any]) -> None:
        """``session.json`` replaced whole (a reader never sees half of it)."""
        tmp = self.events_dir / f".{SESSION_FILE}.tmp"
        tmp.write_text(json.dumps(record), encoding="utf-8")
        os.replace(tmp, self.events_dir / SESSION_FILE)

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


def _as_is(record: Record) -> Iterable[EventSpec]:
    if isinstance(record, UserEvent):
        return [EventSpec(record.name, record.attributes, record.files)]
    return ()


#: how many dropped records' errors a run keeps (the count is exact; the first errors say what went wrong)
DROP_ERRORS_KEPT = 5


def record_kind(record: Any) -> str | None:
    """What a dropped record was, in torch's words where it has them: a structured-trace record's first
    metadata key (and its artifact's name), a user event's name, else the record's type."""
    try:
        if isinstance(record, str):  # (already a name: a compiled function's)
            return record[:200]
        md = getattr(record, "metadata", None)
        if isinstance(md, dict) and md:
            key = str(next(iter(md)))
            sub = md.get(key)
            if isinstance(sub, dict) and isinstance(sub.get("name"), str):
                return f"{key}:{sub['name']}"[:200]
            return key[:200]
        name = getattr(record, "name", None)
        if isinstance(name, str):
            return name[:200]
        return None if record is None else type(record).__name__
    except Exception:
        return None


def stop_reason(exc: BaseException) -> str:
    """``disk_full`` / ``write_error`` (the disk said no) or ``tracer_error`` (a bug of ours)."""
    if isinstance(exc, OSError):
        return "disk_full" if exc.errno in (errno.ENOSPC, errno.EDQUOT) else "write_error"
    return "tracer_error"


class BackgroundWriter:
    """A queue and one thread: producers ``submit`` typed records (:mod:`magi_format.torch_records`); the thread
    turns each into events with ``translate`` (the session's ``TraceMapper.events``) and writes them.

    Records are taken off the queue and written under one lock (``_work``), by the thread or by a caller of
    :meth:`write_through`, so they are written in the order they were submitted whoever writes them."""

    def __init__(self, writer: RunWriter,
                 translate: Callable[[Record], Iterable[EventSpec]] | None = None) -> None:
        self.writer = writer
        self.translate = translate or _as_is
        self._items: collections.deque = collections.deque()  # (append / popleft: atomic)
        self._wake = threading.Event()
        self._work = threading.Lock()
        self._stopping = False
        self.failed = False
        self.stop_error: str | None = None
        #: records dropped (a hook or the mapping raised on them), and the first few errors (:meth:`drop`)
        self.dropped = 0
        self.drop_errors: list[dict[str, Any]] = []
        self._drop_lock = threading.Lock()
        self._warned = False
        self._thread = threading.Thread(target=self._loop, name="magi-tracer-writer", daemon=True)
        self._thread.start()

    def submit(self, record: Record) -> None:
        if not self.failed:
            self._items.append(record)
            self._wake.set()

    def write_through(self, timeout: float = 30.0) -> bool:
        """Write what is queued now from the calling thread (waiting, at most ``timeout`` s, for a record
        the writer thread is writing): when it returns True, everything submitted before the call is on
        disk. What a compile's closing record is written with (:mod:`tracer.capture`)."""
        if not self._work.acquire(timeout=timeout):
            return False
        try:
            self._drain()
        finally:
            self._work.release()
        return True

    def _loop(self) -> None:
        while True:
            self._wake.wait()
            self._wake.clear()  # (a record submitted from here on sets it again)
            with self._work:
                self._drain()
            if self._stopping and not self._items:
                return

    def _drain(self) -> None:
        """Write every queued record, in order (``_work`` is held)."""
        items = self._items
        while items:
            item = items.popleft()
            if self.failed:
                continue
            try:
                ts = getattr(item, "timestamp", None)
                specs = list(self.translate(item) or ())
            except Exception as exc:  # the mapping cannot read this record: drop it, record the rest
                self.drop("mapping", exc, item)
                continue
            for spec in specs:
                if spec.timestamp is None:
                    spec = spec._replace(timestamp=ts)
                try:
                    self.writer.write(*spec)
                except OSError as exc:  # the disk said no: stop (never let the tracer break the program)
                    self.fail(exc)
                    break
                except Exception as exc:  # this event cannot be written (its attributes): drop it alone
                    self.drop("write", exc, item)

    def drop(self, where: str, exc: BaseException, record: Any = None) -> None:
        """One record is lost (``where``: the hook or stage that raised on it); the recording goes on. Counted,
        with the first :data:`DROP_ERRORS_KEPT` errors, for the run's ``session.json``. Never raises."""
        try:
            with self._drop_lock:
                self.dropped += 1
                if len(self.drop_errors) < DROP_ERRORS_KEPT:
                    self.drop_errors.append({"where": where, "error": f"{type(exc).__name__}: {exc}"[:1000],
                                             "record": record_kind(record)})
        except Exception:
            pass

    def drops(self) -> dict[str, Any]:
        """What ``session.json`` says of dropped records (``tracer.dropped_records``, ``tracer.drop_errors``)."""
        with self._drop_lock:
            return {"dropped_records": self.dropped, "drop_errors": list(self.drop_errors)}

    def fail(self, exc: BaseException) -> None:
        """Stop recording: one warning, and a last ``tracer_stopped`` event if the disk still takes it."""
        if self.failed:
            return
        self.failed = True
        self.stop_error = f"{type(exc).__name__}: {exc}"
        note = ""
        try:
            attrs = {**scope_attrs(None), "source": "tracer", "reason": stop_reason(exc), "error": self.stop_error}
            self.writer.write(point_event(TRACER_STOPPED), attrs, {})
        except Exception as final:  # the disk is gone: the run cannot say it stopped, so the warning does
            note = f" (and its final {TRACER_STOPPED} event could not be written: {type(final).__name__})"
        if not self._warned:
            self._warned = True
            warnings.warn(f"magi-tui tracer stopped recording {self.writer.run_dir}: "
                          f"{self.stop_error}{note}", TracerWarning, stacklevel=2)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until everything submitted so far is written (written from here if the thread is gone)."""
        self.write_through(timeout)

    def close(self) -> None:
        self.flush()
        self._stopping = True
        self._wake.set()
        self._thread.join(timeout=10)
        self.writer.close()
