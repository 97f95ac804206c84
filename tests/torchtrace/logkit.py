"""Pieces of the real TORCH_TRACE fixtures for tests: whole records (metadata line + payload lines) as
bytes, so a test can write a log record by record, cut one in half, or put garbage between two."""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path

from tests.support.paths import TORCH_TRACE

BREAKS_LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"
DYNAMIC_LOG = TORCH_TRACE / "dynamic_shapes_backward.log"
_HEAD = re.compile(rb"^[VIWEC]\d{4} ", re.M)


def records(path: Path = BREAKS_LOG) -> list[bytes]:
    """The log's records, each ending with its newline."""
    data = path.read_bytes()
    starts = [m.start() for m in _HEAD.finditer(data)]
    return [data[a:b] for a, b in zip(starts, starts[1:] + [len(data)])]


def kind(rec: bytes) -> str:
    md = json.loads(rec.split(b"] ", 1)[1].split(b"\n", 1)[0])
    return next(iter(md))


def make_record(metadata: dict, payload: str | None = None, *, md5: str | None = None) -> bytes:
    """A record in torch's format (``has_payload`` is the payload's md5 unless ``md5`` says otherwise)."""
    md = dict(metadata)
    if payload is not None:
        md["has_payload"] = md5 or hashlib.md5(payload.encode()).hexdigest()
    out = b"V1122 11:12:39.772000 5512 torch/_dynamo/utils.py:2350] " + json.dumps(md).encode() + b"\n"
    if payload is not None:
        out += b"".join(b"\t" + ln.encode() + b"\n" for ln in payload.split("\n"))
    return out


#: small logs recorded here from real programs (``logs/record.py`` re-records them)
RECORDED = Path(__file__).resolve().parent / "logs"


def settle(path: Path, age_s: float = 60.0) -> Path:
    """Date the file back: its writer has gone (the reader's settled rule)."""
    import os
    import time

    t = time.time() - age_s
    os.utime(path, (t, t))
    return path


def write_log(path: Path, recs: list[bytes], *, settled: bool = True) -> Path:
    path.write_bytes(b"".join(recs))
    return settle(path) if settled else path


def retag(rec: bytes, old: bytes, new: bytes) -> bytes:
    """A record with a piece of its metadata line replaced (payload and its md5 unchanged)."""
    head, nl, rest = rec.partition(b"\n")
    assert old in head, (old, head[:200])
    return head.replace(old, new, 1) + nl + rest
