"""Helpers shared by the model and CLI tests: where the real fixtures are, and run-dir writers."""

from __future__ import annotations

import json
import os
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]


def fixtures_root() -> Path | None:
    """The real upstream run dirs: $MAGI_TUI_FIXTURES, else tests/fixtures/, else ../shared/fixtures/."""
    candidates = []
    if os.environ.get("MAGI_TUI_FIXTURES"):
        candidates.append(Path(os.environ["MAGI_TUI_FIXTURES"]))
    if os.environ.get("MAGI_SHARED"):  # the same variable tests/conftest.py reads
        candidates.append(Path(os.environ["MAGI_SHARED"]) / "fixtures" / "magi_depyf")
    candidates += [REPO / "tests" / "fixtures" / "magi_depyf", REPO.parent / "shared" / "fixtures" / "magi_depyf"]
    for c in candidates:
        if (c / "transformer").is_dir():
            return c
    return None


FIXTURES = fixtures_root()
COLD = ("transformer/magi_depyf/run_20261122_111900/model_1_TwoLayerTransformer_rank_0")
WARM = ("transformer/magi_depyf/run_20261122_112002/model_1_TwoLayerTransformer_rank_0")


def ev_line(index: int, name: str, *, files=(), ts: float = 1795346341.0, **attrs) -> str:
    """One timeline line in the writer's own shape (key order, ensure_ascii=False)."""
    if "scope" not in attrs:
        attrs = {"scope": "subgraph" if name.startswith("subgraph_") else "fullgraph", **attrs}
    obj = {"index": index, "name": name, "relative_time": "0.0ms", "files": list(files),
           "attributes": attrs, "datetime": "2026-11-22 11:19:01.460", "timestamp": ts + index / 1000}
    return json.dumps(obj, ensure_ascii=False) + "\n"


def write_run(run_dir: Path, lines: list[str] | str | bytes) -> Path:
    """A run dir whose timeline.jsonl holds exactly ``lines``."""
    te = run_dir / "timeline_events"
    te.mkdir(parents=True, exist_ok=True)
    data = lines if isinstance(lines, (str, bytes)) else "".join(lines)
    (te / "timeline.jsonl").write_bytes(data.encode() if isinstance(data, str) else data)
    return run_dir


def lc(index: int, phase: str, lifecycle: str, *, sub: int | None = None, frag: str | None = None, **attrs) -> str:
    """A lifecycle event line: ``lc(3, "before", "compiler_compile", graph_index=0)``."""
    files = attrs.pop("files", ())
    frag = frag or lifecycle.lower()
    if sub is None:
        name = f"fullgraph_{phase}_{frag}"
        a = {"scope": "fullgraph"}
    else:
        name = f"subgraph_{sub}_{phase}_{frag}"
        a = {"scope": "subgraph", "subgraph": f"submod_{sub}", "subgraph_index": sub}
    a.update(lifecycle_name=lifecycle, runtime_shape=None)
    if phase == "after":
        a["duration_ms"] = 1.5
    if phase == "failed":
        a.setdefault("exception_type", "RuntimeError")
        a.setdefault("exception_message", "boom")
    a.update(attrs)
    return ev_line(index, name, files=files, **a)
