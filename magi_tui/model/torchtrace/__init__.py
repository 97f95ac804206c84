"""TORCH_TRACE logs (``TORCH_TRACE=<dir>``: ``dedicated_log_torch_trace_[rank_<N>_]<random>.log``) as runs.

A log is read like a run directory's ``timeline.jsonl`` — incrementally, tolerantly — and its records go
through the mapping the tracer uses too (``magi_format.torch_mapping.TraceMapper``), so a log and a
live-traced run of the same program give the same events. See :mod:`magi_tui.model.torchtrace.reader`.

This module only *recognises* logs (cheap, imports nothing heavy): the reader imports the
mapping when a log is opened.
"""

from __future__ import annotations

import os
import re
import stat
from pathlib import Path

from magi_format.runname import RunName

#: torch's file name (``LazyTraceHandler``: ``mkstemp`` with this prefix and ``.log``)
LOG_NAME_RE = re.compile(r"^dedicated_log_torch_trace_(?:rank_(\d+)_)?.*\.log(?:\.gz)?$")
#: how a log compressed with gzip ends (opened directly: read from a private unpacked copy)
GZ_SUFFIX = ".gz"
#: the glog prefix of a record line (TORCH_TRACE.md §1 "Line format")
GLOG_RE = re.compile(rb"^([VIWEC])(\d\d)(\d\d) (\d\d):(\d\d):(\d\d)\.(\d+) +(\d+) ([^\]\n]*):(\d+)\] ")
_SNIFF_BYTES = 4096

__all__ = ["LOG_NAME_RE", "GLOG_RE", "GZ_SUFFIX", "is_log_name", "is_trace_log", "log_rank", "log_run_name"]


def is_log_name(name: str) -> bool:
    """A file name torch gives a trace log."""
    return bool(LOG_NAME_RE.match(name))


def log_rank(path: Path) -> int | None:
    m = LOG_NAME_RE.match(path.name)
    return int(m.group(1)) if m and m.group(1) is not None else None


def log_run_name(path: Path) -> RunName:
    """A log's run name: no run id nor model index; the rank from torch's file name."""
    return RunName(None, None, None, log_rank(path), None)


def _gunzip_head(data: bytes) -> bytes:
    """The first bytes a gzip stream's start decompresses to (as much as ``data`` holds)."""
    import zlib

    try:
        return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(data, _SNIFF_BYTES)
    except zlib.error:
        return b""


def is_trace_log(path: str | os.PathLike[str]) -> bool:
    """A regular file named like a trace log (``.log`` or ``.log.gz``), or any regular file (gzip'ed or
    not) whose first line is a TORCH_TRACE
    record (``V1122 11:12:39.772000 5512 torch/...:2350] {...``), a byte-order mark before it allowed. Never raises, never blocks (a FIFO is
    not opened)."""
    try:
        p = Path(path)
        st = os.stat(p)
        if not stat.S_ISREG(st.st_mode):
            return False
        if is_log_name(p.name):
            return True
        fd = os.open(p, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0))
        try:
            head = os.pread(fd, _SNIFF_BYTES, 0)
        finally:
            os.close(fd)
        if p.name.endswith(GZ_SUFFIX) and head[:2] == b"\x1f\x8b":
            head = _gunzip_head(head)
    except (OSError, ValueError, TypeError):
        return False
    head = head.removeprefix(b"\xef\xbb\xbf")  # a byte-order mark, as an editor on Windows leaves it
    m = GLOG_RE.match(head)
    return bool(m) and head[m.end():m.end() + 1] == b"{"
