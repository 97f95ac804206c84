"""Which Inductor cache directory a run used, read off the path torch wrote its output code to.

No record names the cache directory, but every Inductor compile writes (on a miss) or loads (on a hit) its
output code into it, and logs where: ``inductor_output_code``'s ``filename`` in a TORCH_TRACE log, the
``after_inductor_codegen`` event's ``filename`` attribute in our tracer's timeline. Torch lays that file
out as ``<cache dir>/<2 characters>/<hash>.py`` (``PyCodeCache.write``), so the directory is two levels
up. A run whose caches were force-disabled still writes the file there (the directory it *would* use).

Torch's ``fx_graph_runnable`` (a repro script it logs per compile) starts with the environment variables that
shaped the compile (``os.environ['TORCHINDUCTOR_FORCE_DISABLE_CACHES'] = '1'``): the only record that the
caches were force-disabled (torch then compiles into a fresh temporary folder and logs no lookup).
:func:`compile_env` reads those lines (a log's payload, or a run dir's first ``fx_graph_runnable.py``).

The run's own file (timeline or log) is scanned, in bounded chunks, for the first such record; nothing
else is opened, and a link out of the run is never followed (:func:`magi_tui.model.sources.paths.open_regular`).
"""

from __future__ import annotations

import os
import re
from pathlib import Path, PurePosixPath

from magi_tui.model.sources.paths import FileProblem, open_regular

#: bytes of a run's file scanned at most for the output-code record (it comes with the first Inductor compile)
MAX_SCAN = 32 << 20
_CHUNK = 1 << 20
#: bytes of a log scanned at most for torch's repro script (it comes with the first Inductor compile, before
#: its output code) and for the compiled frames' files
MAX_ENV_SCAN = 8 << 20
#: a record that carries the output code's path, and the path itself (a JSON string) after it
_MARKERS = (b'"inductor_output_code": {"filename": "', b'_after_inductor_codegen"')
_FILENAME = re.compile(rb'"filename": "((?:[^"\\]|\\.){1,4096})"')
_LINE_END = b"\n"
_ENV = re.compile(r"^\t?os\.environ\['(?P<name>[A-Z][A-Z0-9_]{0,80})'\] = '(?P<value>[^'\n]{0,300})'$", re.M)
#: variables whose value is kept (the rest: only that they were set; a value may be a secret)
KEEP_VALUES = frozenset({"TORCHINDUCTOR_FORCE_DISABLE_CACHES", "TORCHINDUCTOR_FX_GRAPH_CACHE",
                         "TORCHINDUCTOR_AUTOGRAD_CACHE", "TORCHINDUCTOR_CACHE_DIR"})
_RUNNABLE = "fx_graph_runnable"


def _decode(raw: bytes) -> str | None:
    import json  # here: a headless start that finds no path never imports it (tests/speed/test_headless_start.py)

    try:
        s = json.loads(b'"' + raw + b'"')
    except ValueError:
        return None
    return s if isinstance(s, str) else None


def cache_dir_from_output_path(path: str) -> str | None:
    """``/c/5s/c5sh….py`` -> ``/c``; None for a path not laid out as torch's code cache lays it out."""
    p = PurePosixPath(path)
    if p.suffix != ".py" or len(p.parts) < 3 or len(p.parent.name) != 2:
        return None
    return str(p.parent.parent)


def scan_cache_dir(file: Path, root: Path | None = None) -> str | None:
    """The cache directory named by the first output-code record of a timeline or a TORCH_TRACE log, else
    None (no Inductor compile recorded, or the file cannot be read)."""
    try:
        fd, _st = open_regular(file, root)
    except FileProblem:
        return None
    try:
        pos, tail = 0, b""
        while pos < MAX_SCAN:
            try:
                chunk = os.pread(fd, _CHUNK, pos)
            except OSError:
                return None
            if not chunk:
                break
            pos += len(chunk)
            buf = tail + chunk
            for marker in _MARKERS:
                at = buf.find(marker)
                while at >= 0:
                    end = buf.find(_LINE_END, at)
                    if end < 0:          # the record runs into the next chunk: read on
                        break
                    m = _FILENAME.search(buf, at, end)
                    if m is not None:
                        path = _decode(m.group(1))
                        found = cache_dir_from_output_path(path) if path else None
                        if found:
                            return found
                    at = buf.find(marker, end)
            cut = buf.rfind(_LINE_END)
            tail = buf[cut + 1:] if cut >= 0 else buf
            if len(tail) > 4 * _CHUNK:    # one line longer than this holds no path we can use
                tail = b""
        return None
    finally:
        os.close(fd)


def _env_of(text: str) -> dict[str, str | None]:
    return {m.group("name"): (m.group("value") if m.group("name") in KEEP_VALUES else None)
            for m in _ENV.finditer(text)}


def compile_env(file: Path, run_dir: Path | None) -> dict[str, str | None]:
    """The environment torch's first ``fx_graph_runnable`` records (name -> value, None where the value is
    not kept): from a run dir's event files when ``run_dir`` is given, else from the log ``file`` itself."""
    from magi_tui.model.sources.paths import read_head

    if run_dir is not None:
        files = run_dir / "timeline_events" / "files"
        try:
            names = sorted(n for n in os.listdir(files) if n.endswith(_RUNNABLE))
        except OSError:
            return {}
        for n in names[:1]:
            text, _problem = read_head(files / n / f"{_RUNNABLE}.py", 64 << 10, run_dir)
            return _env_of(text or "")
        return {}
    try:
        fd, _st = open_regular(file)
    except FileProblem:
        return {}
    try:
        pos = 0
        marker = b'"name": "fx_graph_runnable"'
        while pos < MAX_ENV_SCAN:
            try:
                chunk = os.pread(fd, 4 * _CHUNK, pos)
            except OSError:
                return {}
            at = chunk.find(marker)
            # torch logs a compile's repro before its output code: output code first, no repro was logged
            code = chunk.find(_MARKERS[0], 0, at if at >= 0 else len(chunk))
            if code >= 0:
                return {}
            if at >= 0:
                more = os.pread(fd, 64 << 10, pos + at)
                head = more.decode("utf-8", "replace")
                cut = head.find("\nV", 1)   # the next glog record
                return _env_of(head[:cut] if cut > 0 else head)
            if len(chunk) < 4 * _CHUNK:     # the end of the log
                return {}
            pos += len(chunk) - len(marker)
        return {}
    finally:
        os.close(fd)


_CO_FILENAME = re.compile(rb'"co_filename": "((?:[^"\\]|\\.){1,4096})"')


def compiled_files(file: Path, limit: int = 32) -> frozenset[str]:
    """The files of the frames torch compiled (``co_filename`` of its records), from the first
    :data:`MAX_ENV_SCAN` bytes of a timeline or a log: what tells one program's runs from another's."""
    try:
        fd, _st = open_regular(file)
    except FileProblem:
        return frozenset()
    out: set[str] = set()
    try:
        pos = 0
        while pos < MAX_ENV_SCAN and len(out) < limit:
            try:
                chunk = os.pread(fd, 4 * _CHUNK, pos)
            except OSError:
                break
            if not chunk:
                break
            for m in _CO_FILENAME.finditer(chunk):
                name = _decode(m.group(1))
                if name and not name.startswith("<"):
                    out.add(name)
            pos += max(1, len(chunk) - 8192)
    finally:
        os.close(fd)
    return frozenset(out)
