"""The cross-run mark: what ``m`` remembered, so ``d`` anywhere (another event, run or rank) diffs
against it. Held by the app; set by the run and compiled-functions screens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Protocol, runtime_checkable


@dataclass
class Mark:
    """A file of an event (or of compiled_functions) in some run."""

    run_path: Path
    ref: Any  # FileRef or a plain path ref: has .path and .title

    @property
    def title(self) -> str:
        return f"{self.run_path.name}: {self.ref.title}"


@runtime_checkable
class HoldsMark(Protocol):
    """What holds the mark: the app (a screen's ``self.app`` is typed as any Textual app)."""

    mark: Mark | None


def mark_of(app: object) -> Mark | None:
    """The mark ``app`` holds (None before ``m``)."""
    return app.mark if isinstance(app, HoldsMark) else None
