"""The in-process hooks on torch (TORCH_TRACE.md part 2).

``TraceHandler``: a ``logging.Handler`` on ``torch.__trace``; a non-empty handler list is what turns
torch's structured tracing on. ``emit`` runs on the compiling thread, so it only snapshots the record
into a :class:`~magi_format.torch_records.TraceRecord` (a shallow copy of the metadata, the payload string, and the
few facts only true right now: the recompile limit in force, whether the compile ids were ours) and
hands it to the writer thread, where the mapping, the formatting and the disk writes happen.

A compile's closing record (:data:`CLOSING_KINDS`: its ``compilation_metrics``) is written through
(``BackgroundWriter.write_through``): the handler returns once it and everything before it is on disk, so a
program that ends with ``os._exit`` right after a compile -- no atexit, the writer thread stopped
mid-queue -- keeps that compile closed (issue 32.8). It costs the compiling thread what the writer thread
had left of the compile's records when it closed.

``LimitHandler``: on ``torch._dynamo.convert_frame``, picks up torch's one warning when a frame hits the
recompile limit (the only record naming the function then) as a
:class:`~magi_format.torch_records.RecompileLimitNote`. Neither ever raises, and neither changes what torch logs.

Each hook's body is one guard: what it cannot handle drops that one record (``BackgroundWriter.drop``:
counted, with its error, in the run's ``session.json``), never the recording nor the compile.
"""

from __future__ import annotations

import logging
import re
from typing import Any, Sequence

from magi_format.torch_mapping import IGNORED
from magi_format.torch_records import RecompileLimitNote, TraceRecord, UserEvent
from tracer.context import compile_ids, hinted_ids
from tracer.writer import BackgroundWriter

TRACE_LOGGER = "torch.__trace"
LIMIT_LOGGER = "torch._dynamo.convert_frame"
_LIMIT_MSG = "torch._dynamo hit config."
_FUNC_INFO = re.compile(r"^'(.*)' \((.*):(\d+)\)$")
#: records that close a compile (forward, or its backward compiled later): written through at once
CLOSING_KINDS = frozenset({"compilation_metrics", "bwd_compilation_metrics",
                           "aot_autograd_backward_compilation_metrics"})


def recompile_limit() -> Any:
    """The recompile limit in force on this thread now (``torch.compile(recompile_limit=…)`` patches the
    config for the duration of the call): ``recompile_limit``, or ``cache_size_limit`` on older torch."""
    try:
        from torch._dynamo import config

        for name in ("recompile_limit", "cache_size_limit"):
            if hasattr(config, name):
                return getattr(config, name)
    except Exception:
        pass
    return None


class TraceHandler(logging.Handler):
    def __init__(self, writer: BackgroundWriter, runtime: Any = None) -> None:
        super().__init__(level=logging.DEBUG)
        self.writer = writer
        self.runtime = runtime

    def emit(self, record: logging.LogRecord) -> None:
        try:
            md = getattr(record, "metadata", None)
            if not md:
                return
            key = next(iter(md))
            if key in IGNORED:
                return
            md = dict(md)
            if key == "dynamo_start" and self.runtime is not None:
                self.runtime.dynamo_start(md)
            context: dict[str, Any] = {}
            if "frame_id" not in md and key != "str":
                ids = hinted_ids()
                if ids is not None:
                    md.update(ids)
                    context["ids_from_hint"] = True
            if key == "artifact" and isinstance(md.get(key), dict) and md[key].get("name") == "recompile_reasons":
                context["recompile_limit"] = recompile_limit()
            payload = getattr(record, "payload", None)
            if payload is not None and not isinstance(payload, str):
                payload = str(payload)
            self.writer.submit(TraceRecord(md, payload, record.created, context))
            if key in CLOSING_KINDS:
                self.writer.write_through()
        except Exception as exc:  # never break the compile: this record is lost, the recording goes on
            self.writer.drop("trace_handler", exc, record)

    def handleError(self, record: logging.LogRecord) -> None:  # pragma: no cover - no stderr noise
        pass


class LimitHandler(logging.Handler):
    """``log.warning("torch._dynamo hit config.%s (%s)\\n   function: %s\\n   last reason: %s …", limit_type,
    limit, "'f' (file:line)", reason, url)`` -> a :class:`RecompileLimitNote`."""

    def __init__(self, writer: BackgroundWriter, runtime: Any = None) -> None:
        super().__init__(level=logging.WARNING)
        self.writer = writer
        self.runtime = runtime

    def emit(self, record: logging.LogRecord) -> None:
        try:
            if not isinstance(record.msg, str) or not record.msg.startswith(_LIMIT_MSG):
                return
            args = record.args if isinstance(record.args, tuple) else ()
            if len(args) < 4:
                return
            limit_type, limit, func_info, reason = args[:4]
            m = _FUNC_INFO.match(str(func_info))
            ids = compile_ids()
            if self.runtime is not None:
                self.runtime.compile_started(ids)
            self.writer.submit(RecompileLimitNote(
                ids=ids, limit_type=str(limit_type), limit=limit,
                function=m.group(1) if m else None, filename=m.group(2) if m else None,
                lineno=int(m.group(3)) if m else None, reason=None if reason is None else str(reason),
                timestamp=record.created))
            self.writer.write_through()  # (the frame runs eagerly from here: nothing closes it later)
        except Exception as exc:
            self.writer.drop("recompile_limit_handler", exc, record)

    def handleError(self, record: logging.LogRecord) -> None:  # pragma: no cover
        pass


#: torch's artifact loggers of Inductor's loop IR (what TORCH_COMPILE_DEBUG writes as ir_*_fusion.txt)
LOOP_IR_LOGGERS = {"ir_pre_fusion": "torch._inductor.debug.__ir_pre_fusion",
                   "ir_post_fusion": "torch._inductor.debug.__ir_post_fusion"}


class LoopIRHandler(logging.Handler):
    """Inductor's ``BEFORE FUSION`` / ``AFTER FUSION`` loop IR (artifact loggers ``ir_pre_fusion`` /
    ``ir_post_fusion``, INFO) -> an ``artifact`` record of that name with the compile's ids, as if torch
    had put it in its structured trace. Only attached when asked (formatting the IR costs time)."""

    def __init__(self, writer: BackgroundWriter, name: str) -> None:
        super().__init__(level=logging.INFO)
        self.writer = writer
        self.artifact = name

    def emit(self, record: logging.LogRecord) -> None:
        try:
            text = record.getMessage()
            for head in ("BEFORE FUSION\n", "AFTER FUSION\n"):
                if text.startswith(head):
                    text = text[len(head):]
            md: dict[str, Any] = {"artifact": {"name": self.artifact, "encoding": "string"}}
            context: dict[str, Any] = {}
            ids = compile_ids()
            if ids is not None:
                md.update(ids)
                if hinted_ids() is not None and ids == hinted_ids():
                    context["ids_from_hint"] = True
            self.writer.submit(TraceRecord(md, text, record.created, context))
        except Exception as exc:
            self.writer.drop("loop_ir_handler", exc, record)

    def handleError(self, record: logging.LogRecord) -> None:  # pragma: no cover
        pass


def attach_loop_ir(writer: BackgroundWriter) -> list[tuple[str, logging.Handler, int]]:
    """Turn Inductor's loop-IR loggers on (INFO) with our handler; returns (logger, handler, old level)."""
    out: list[tuple[str, logging.Handler, int]] = []
    for name, logger in LOOP_IR_LOGGERS.items():
        log = logging.getLogger(logger)
        h = LoopIRHandler(writer, name)
        out.append((logger, h, log.level))
        log.addHandler(h)
        log.setLevel(logging.INFO)
    return out


def detach_loop_ir(added: Sequence[tuple[str, logging.Handler, int]]) -> None:
    for logger, h, level in added:
        log = logging.getLogger(logger)
        log.removeHandler(h)
        log.setLevel(level)


#: AOTAutograd computes its cache key's components (``debug_lines``) only when this logger is enabled for
#: DEBUG; FX-graph's are always computed
AOT_CACHE_LOGGER = "torch._functorch._aot_autograd.autograd_cache"


class _BelowLevel(logging.Filter):
    """Drops what the logger would not have let through before we lowered its level: enabling DEBUG is
    only for ``isEnabledFor`` (torch then computes the key's components), never for more output."""

    def __init__(self, level: int) -> None:
        super().__init__()
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        return record.levelno >= self.level


def attach_cache_components() -> tuple[logging.Logger, int, logging.Filter] | None:
    """Make AOTAutograd log its cache key's components with each hit / miss (as FX-graph does), without
    printing anything it would not have printed; returns what :func:`detach_cache_components` undoes."""
    log = logging.getLogger(AOT_CACHE_LOGGER)
    before = log.getEffectiveLevel()
    if before <= logging.DEBUG:
        return None
    flt = _BelowLevel(before)
    log.addFilter(flt)
    old = log.level
    log.setLevel(logging.DEBUG)
    return log, old, flt


def detach_cache_components(state: tuple[logging.Logger, int, logging.Filter] | None) -> None:
    if state is None:
        return
    log, old, flt = state
    log.setLevel(old)
    log.removeFilter(flt)


#: Inductor's performance hints (``Using FallbackKernel: aten.x``, …): artifact loggers ``perf_hints``
PERF_HINT_LOGGERS = tuple(f"torch._inductor.{m}.__perf_hints"
                          for m in ("graph", "compile_fx", "codegen.simd", "codegen.triton"))
PERF_HINT_EVENT = "perf_hint"


class PerfHintTap(logging.Filter):
    """On an Inductor ``perf_hints`` logger: each hint becomes a ``perf_hint`` point event of the compile it
    happens in; the record then goes on only where it went before (the logger's level was lowered to INFO
    for us: what it would not have passed, it still does not)."""

    def __init__(self, writer: BackgroundWriter, level: int) -> None:
        super().__init__()
        self.writer = writer
        self.level = level

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            from magi_format.names import point_event

            attrs: dict[str, Any] = {"source": "tracer", "hint": record.getMessage()[:2000]}
            ids = compile_ids()
            if ids is not None:
                attrs.update(compile_id=f"{ids['frame_id']}/{ids['frame_compile_id']}", attempt=ids.get("attempt", 0))
            self.writer.submit(UserEvent(point_event(PERF_HINT_EVENT), attrs, {}, record.created))
        except Exception as exc:
            self.writer.drop("perf_hint_tap", exc, record)
        return record.levelno >= self.level


def attach_perf_hints(writer: BackgroundWriter) -> list[tuple[logging.Logger, int, logging.Filter]]:
    out: list[tuple[logging.Logger, int, logging.Filter]] = []
    for name in PERF_HINT_LOGGERS:
        log = logging.getLogger(name)
        tap = PerfHintTap(writer, log.getEffectiveLevel())
        log.addFilter(tap)
        out.append((log, log.level, tap))
        if log.getEffectiveLevel() > logging.INFO:
            log.setLevel(logging.INFO)
    return out


def detach_perf_hints(state: Sequence[tuple[logging.Logger, int, logging.Filter]]) -> None:
    for log, level, tap in state:
        log.setLevel(level)
        log.removeFilter(tap)


def seed_strings() -> dict[int, str]:
    """Strings torch interned before we attached (they are not emitted again)."""
    try:
        from torch._logging import structured

        return {i: s for s, i in structured.INTERN_TABLE.items()}
    except Exception:
        return {}


def framework_paths() -> tuple[str, ...]:
    """Where torch lives: frames there are never "the user's frame"."""
    try:
        import os

        import torch

        return (os.path.dirname(os.path.realpath(torch.__file__)) + os.sep,
                os.path.dirname(os.path.abspath(torch.__file__)) + os.sep)
    except Exception:
        return ()


def attach(writer: BackgroundWriter, keep_trace_path: Any = None,
           runtime: Any = None) -> list[tuple[str, logging.Handler]]:
    """Add our handlers (and optionally a TORCH_TRACE-format file handler); returns what was added.
    ``runtime`` (:class:`tracer.runtime.RuntimeCounters`) learns which frame each compile is for."""
    log = logging.getLogger(TRACE_LOGGER)
    added: list[tuple[str, logging.Handler]] = [(TRACE_LOGGER, TraceHandler(writer, runtime))]
    log.addHandler(added[0][1])
    if keep_trace_path is not None:
        try:
            from torch._logging._internal import TorchLogsFormatter

            fh = logging.FileHandler(keep_trace_path, mode="a", encoding="utf-8")
            fh.setFormatter(TorchLogsFormatter(trace=True))
            log.addHandler(fh)
            added.append((TRACE_LOGGER, fh))
        except Exception:
            pass
    if log.level > logging.DEBUG or log.level == logging.NOTSET:
        log.setLevel(logging.DEBUG)
    limit = LimitHandler(writer, runtime)
    logging.getLogger(LIMIT_LOGGER).addHandler(limit)  # no level change: we see what torch logs anyway
    added.append((LIMIT_LOGGER, limit))
    return added


def detach(added: Sequence[tuple[str, logging.Handler]]) -> None:
    for name, h in added:
        logging.getLogger(name).removeHandler(h)
        if isinstance(h, logging.FileHandler):
            h.close()
