"""The in-process hook on torch's structured trace (TORCH_TRACE.md part 2).

A ``logging.Handler`` on ``torch.__trace``: a non-empty handler list is what turns torch's structured
tracing on. ``emit`` runs on the compiling thread, so it only snapshots the record (a shallow copy of
the metadata plus the payload string) and hands it to the writer thread, where the mapping, the
formatting and the disk writes happen. It never raises.
"""

from __future__ import annotations

import logging
from typing import Any

from tracer.mapping import IGNORED, TraceMapper
from tracer.writer import BackgroundWriter

TRACE_LOGGER = "torch.__trace"


class TraceHandler(logging.Handler):
    def __init__(self, writer: BackgroundWriter, mapper: TraceMapper) -> None:
        super().__init__(level=logging.DEBUG)
        self.writer = writer
        self.mapper = mapper

    def emit(self, record: logging.LogRecord) -> None:
        try:
            md = getattr(record, "metadata", None)
            if not md:
                return
            key = next(iter(md))
            if key in IGNORED:
                return
            md = dict(md)
            if "frame_id" not in md and key != "str":
                ids = _hint_ids()
                if ids is not None:
                    md.update(ids)
            payload = getattr(record, "payload", None)
            if payload is not None and not isinstance(payload, str):
                payload = str(payload)
            mapper = self.mapper
            self.writer.submit(lambda: mapper.handle(md, payload))
        except Exception as exc:  # never break the compile
            self.writer.fail(exc)

    def handleError(self, record: logging.LogRecord) -> None:  # pragma: no cover - no stderr noise
        pass


def _hint_ids():
    from tracer.session import _hint

    return getattr(_hint, "ids", None)


def seed_strings() -> dict[int, str]:
    """Strings torch interned before we attached (they are not emitted again)."""
    try:
        from torch._logging import structured

        return {i: s for s, i in structured.INTERN_TABLE.items()}
    except Exception:
        return {}


def attach(handler: logging.Handler, keep_trace_path: Any = None) -> list[logging.Handler]:
    """Add our handler (and optionally a TORCH_TRACE-format file handler); returns what was added."""
    log = logging.getLogger(TRACE_LOGGER)
    added = [handler]
    log.addHandler(handler)
    if keep_trace_path is not None:
        try:
            from torch._logging._internal import TorchLogsFormatter

            fh = logging.FileHandler(keep_trace_path, mode="a", encoding="utf-8")
            fh.setFormatter(TorchLogsFormatter(trace=True))
            log.addHandler(fh)
            added.append(fh)
        except Exception:
            pass
    if log.level > logging.DEBUG or log.level == logging.NOTSET:
        log.setLevel(logging.DEBUG)
    return added


def detach(added: list[logging.Handler]) -> None:
    log = logging.getLogger(TRACE_LOGGER)
    for h in added:
        log.removeHandler(h)
        if isinstance(h, logging.FileHandler):
            h.close()
