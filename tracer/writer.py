"""Writing a run directory: ``timeline_events/timeline.jsonl`` plus one folder per event with files.

Every event is one ``os.write`` of one ``\\n``-terminated line on an ``O_APPEND`` descriptor (so a
reader never sees half a line except while that single write is in flight, and a killed process
leaves a valid prefix), written *before* the event's folder. Writing happens on one background
thread fed by a queue, so the compiling thread only enqueues; ordering is the queue's order.

Any error (disk full, unwritable root, a bug in a mapper) becomes one warning and stops recording;
it never reaches the user's program. Importable without torch.
"""

from __future__ import annotations

import json
import os
import queue
import threading
import time
import warnings
from datetime import datetime
from pathlib import Path
from typing import Any, Callable, Iterable

from magi_format.layout import FILES_DIR, TIMELINE_DIR, TIMELINE_FILE, event_folder_name
from magi_format.text import relative_time

#: (name, attributes, files) — files maps a file name to its text
EventSpec = tuple[str, dict[str, Any], dict[str, str]]


class TracerWarning(UserWarning):
    """The tracer had a problem of its own; the program's results are unaffected."""


def _json_safe(value: Any) -> Any:
    try:
        json.dumps(value)
        return value
    except (TypeError, ValueError):
        return json.loads(json.dumps(value, default=repr))


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
            self._index += 1
            attrs = _json_safe(attrs)
            obj = {
                "index": index,
                "name": name,
                "relative_time": relative_time(max(0.0, ts - self._t0)),
                "files": list(files),
                "attributes": attrs,
                "datetime": datetime.fromtimestamp(ts).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3],
                "timestamp": ts,
            }
            line = (json.dumps(obj, ensure_ascii=False) + "\n").encode("utf-8")
            if self._fd is None:
                self._fd = os.open(self.events_dir / TIMELINE_FILE,
                                   os.O_WRONLY | os.O_APPEND | os.O_CREAT, 0o644)
            os.write(self._fd, line)
            if files:
                folder = self.events_dir / FILES_DIR / event_folder_name(index, name)
                sub = attrs.get("subgraph") if isinstance(attrs, dict) else None
                if isinstance(sub, str) and sub and "/" not in sub and sub not in (".", ".."):
                    folder = folder / sub
                folder.mkdir(parents=True, exist_ok=True)
                for fname, text in files.items():
                    (folder / os.path.basename(fname)).write_text(text, encoding="utf-8", errors="replace")
                (folder / "attributes.json").write_text(json.dumps(attrs, indent=2, ensure_ascii=False),
                                                        encoding="utf-8")
            return index

    def close(self) -> None:
        with self._lock:
            if self._fd is not None:
                os.close(self._fd)
                self._fd = None


class BackgroundWriter:
    """A queue and one thread: producers ``submit`` callables that return events to write."""

    _STOP = object()

    def __init__(self, writer: RunWriter) -> None:
        self.writer = writer
        self.queue: queue.Queue = queue.Queue()
        self.failed = False
        self._warned = False
        self._thread = threading.Thread(target=self._loop, name="magi-tracer-writer", daemon=True)
        self._thread.start()

    def submit(self, produce: Callable[[], Iterable[EventSpec]]) -> None:
        if not self.failed:
            self.queue.put(produce)

    def submit_event(self, name: str, attrs: dict[str, Any], files: dict[str, str] | None = None) -> None:
        ts = time.time()
        self.submit(lambda: [(name, attrs, files or {}, ts)])

    def _loop(self) -> None:
        while True:
            item = self.queue.get()
            try:
                if item is self._STOP:
                    return
                if self.failed:
                    continue
                for spec in item() or ():
                    self.writer.write(*spec)
            except Exception as exc:  # never let the tracer break the program
                self.fail(exc)
            finally:
                self.queue.task_done()

    def fail(self, exc: BaseException) -> None:
        self.failed = True
        if not self._warned:
            self._warned = True
            warnings.warn(f"magi-tui tracer stopped recording {self.writer.run_dir}: "
                          f"{type(exc).__name__}: {exc}", TracerWarning, stacklevel=2)

    def flush(self, timeout: float = 30.0) -> None:
        """Wait until everything submitted so far is written."""
        end = time.monotonic() + timeout
        while self.queue.unfinished_tasks and time.monotonic() < end and self._thread.is_alive():
            time.sleep(0.005)

    def close(self) -> None:
        self.flush()
        self.queue.put(self._STOP)
        self._thread.join(timeout=10)
        self.writer.close()
