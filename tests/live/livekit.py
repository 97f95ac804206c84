"""Helpers for the live tests: a timeline writer following FORMAT.md §4, and a condition waiter."""

from __future__ import annotations

import json
import os
import time
from datetime import datetime
from pathlib import Path

from magi_format.text import relative_time
from tests.support.timeline import ev_line


def run_dir(root: Path, stamp: str = "20261122_120000", label: str = "demo", rank: int = 0) -> Path:
    """Where the tracer puts a run (FORMAT.md B1)."""
    return root / "magi_depyf" / f"run_{stamp}" / f"model_0_{label}_rank_{rank}"


def event_line(index: int, name: str, *, files: list[str] | None = None, t0: float | None = None,
               **attrs) -> bytes:
    """One line as the tracer writes it now (``relative_time`` from ``t0``), via the one test builder."""
    now = time.time()
    line = ev_line(index, name, files=files or (), ts=now - index / 1000, **attrs)
    obj = json.loads(line)
    obj["relative_time"] = relative_time(max(0.0, now - (t0 or now)))
    obj["datetime"] = datetime.fromtimestamp(now).strftime("%Y-%m-%d %H:%M:%S.%f")[:-3]
    return (json.dumps(obj, ensure_ascii=False) + "\n").encode()


class TimelineWriter:
    """Appends events to ``<run>/timeline_events/timeline.jsonl`` the way the tracer does."""

    def __init__(self, run: Path) -> None:
        self.run = run
        self.folder = run / "timeline_events"
        self.path = self.folder / "timeline.jsonl"
        self.index = 0
        self.t0 = time.time()

    def start(self) -> "TimelineWriter":
        self.folder.mkdir(parents=True, exist_ok=True)
        self.path.touch()
        return self

    def raw(self, data: bytes) -> None:
        with open(self.path, "ab") as fh:
            fh.write(data)
            fh.flush()

    def emit(self, name: str, *, files: dict[str, str] | None = None, write_files: bool = True,
             **attrs) -> int:
        idx = self.index
        self.index += 1
        self.raw(event_line(idx, name, files=list(files or {}), t0=self.t0, **attrs))
        if files and write_files:
            self.write_files(idx, name, files, attrs)
        return idx

    def write_files(self, idx: int, name: str, files: dict[str, str], attrs: dict | None = None) -> None:
        folder = self.folder / "files" / f"{idx:04d}_{name}"
        if attrs and attrs.get("subgraph"):
            folder = folder / attrs["subgraph"]
        folder.mkdir(parents=True, exist_ok=True)
        for fname, text in files.items():
            (folder / fname).write_text(text)

    def lifecycle(self, lc: str, *, scope: str = "fullgraph", fail: str | None = None) -> None:
        self.emit(f"{scope}_before_{lc}", lifecycle_name=lc)
        if fail:
            self.emit(f"{scope}_failed_{lc}", lifecycle_name=lc, exception_type=fail,
                      exception_message=f"{fail}: boom")
        else:
            self.emit(f"{scope}_after_{lc}", lifecycle_name=lc, duration_ms=1.5)

    def new_session(self) -> None:
        self.index = 0
        self.t0 = time.time()


def write_fake_tracer(dirpath: Path, name: str = "faketracer") -> Path:
    """A stand-in for ``python -m tracer -o ROOT script.py``: prints MAGI_RUN_DIR on stderr, then
    runs the script with ``MAGI_FAKE_RUN`` naming the run dir (the script writes the events)."""
    pkg = dirpath / name
    pkg.mkdir(parents=True, exist_ok=True)
    (pkg / "__init__.py").write_text("")
    (pkg / "__main__.py").write_text(
        "import os, runpy, sys, time\n"
        "args = sys.argv[1:]\n"
        "assert args[0] == '-o', args\n"
        "root, script, rest = args[1], args[2], args[3:]\n"
        "run = os.path.abspath(os.path.join(root, 'magi_depyf', time.strftime('run_%Y%m%d_%H%M%S'),\n"
        "                      'model_0_' + os.path.basename(script)[:-3] + '_rank_0'))\n"
        "os.makedirs(os.path.join(run, 'timeline_events'), exist_ok=True)\n"
        "os.environ['MAGI_FAKE_RUN'] = run\n"
        "print('MAGI_RUN_DIR=' + run, file=sys.stderr, flush=True)\n"
        "sys.argv = [script, *rest]\n"
        "runpy.run_path(script, run_name='__main__')\n"
    )
    return pkg


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie is dead for our purposes
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().split(")")[-1].split()[0] != "Z"
    except OSError:
        return False
