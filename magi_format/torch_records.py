"""What travels on the writer queue: typed records, not closures (importable without torch).

The compiling thread only builds one of these and enqueues it; the writer thread turns it into
:data:`EventSpec` s (``TraceMapper.events``) and writes them. Each record carries the time it was made,
so an event's timestamp is when torch (or the user) produced it, not when the writer got to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, NamedTuple


class EventSpec(NamedTuple):
    """One event the mapping makes of a record: what the writer writes as a timeline line and its files."""

    name: str
    attrs: dict[str, Any]
    #: file name -> its text (the event's folder)
    files: dict[str, str]
    #: when the event happened, if not when its record was made (None: the record's time)
    timestamp: float | None = None


@dataclass(frozen=True)
class TraceRecord:
    """One record of torch's structured trace: its metadata (a shallow copy), its payload, and the
    facts only knowable on the compiling thread at that moment (``context``: e.g. ``recompile_limit``,
    ``ids_from_hint``)."""

    metadata: dict[str, Any]
    payload: str | None
    timestamp: float
    context: dict[str, Any] = field(default_factory=dict)


@dataclass(frozen=True)
class RecompileLimitNote:
    """torch's own warning ``torch._dynamo hit config.<limit_type> (<limit>)`` (logger
    ``torch._dynamo.convert_frame``): the only place torch names the function when a frame hits the
    recompile limit; its compilation_metrics then has ``co_name: null``."""

    ids: dict[str, Any] | None
    limit_type: str
    limit: Any
    function: str | None
    filename: str | None
    lineno: int | None
    reason: str | None
    timestamp: float


@dataclass(frozen=True)
class UserEvent:
    """A lifecycle / point event from user code (``observe_lifecycle``, ``emit_event``, piecewise)."""

    name: str
    attributes: dict[str, Any]
    files: dict[str, str]
    timestamp: float


Record = TraceRecord | RecompileLimitNote | UserEvent
