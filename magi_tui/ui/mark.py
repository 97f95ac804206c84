"""The cross-run mark: what ``m`` remembered, so ``d`` anywhere (another event, run or rank) diffs
against it. Held by the app; set by the run and compiled-functions screens."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any


@dataclass
class Mark:
    """A file of an event (or of compiled_functions) in some run."""

    run_path: Path
    ref: Any  # FileRef or a plain path ref: has .path and .title

    @property
    def title(self) -> str:
        return f"{self.run_path.name}: {self.ref.title}"
