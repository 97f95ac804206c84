"""Did the tracer close the run? Its ``timeline_events/session.json`` (docs/FORMAT.md, ours) says who writes
the run and whether that writer finished: a program killed after its last compile closed leaves every
lifecycle closed, so only this record tells the run was cut short. Upstream runs, logs and debug folders have
no such record: nothing is concluded for them."""

from __future__ import annotations

import os
from pathlib import Path

from msgspec import Struct

from magi_format.layout import SESSION_FILE, TIMELINE_DIR
from magi_tui.model.files import json_or_none, read_head

_LIMIT = 4096  # the record is ~120 bytes: anything longer is not ours


class SessionRecord(Struct, frozen=True):
    pid: int | None
    host: str | None
    started: float | None
    ended: float | None

    def writer_alive(self) -> bool | None:
        """Whether the writing process still runs: None when it cannot be told (another host, no pid)."""
        import socket  # here: the headless commands never ask, and its import is ~2 ms of their start

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


def _number(v: object) -> float | None:
    return float(v) if isinstance(v, (int, float)) and not isinstance(v, bool) else None


def read_session(run_dir: Path) -> SessionRecord | None:
    """The run's session record, or None when it has none (or not one of ours)."""
    text, _problem = read_head(run_dir / TIMELINE_DIR / SESSION_FILE, _LIMIT, run_dir)
    obj = json_or_none(text)
    if not isinstance(obj, dict) or obj.get("writer") != "magi-tui tracer":
        return None
    pid = obj.get("pid")
    host = obj.get("host")
    return SessionRecord(pid if isinstance(pid, int) and not isinstance(pid, bool) and pid > 0 else None,
                         host if isinstance(host, str) else None, _number(obj.get("started")),
                         _number(obj.get("ended")))
