"""What ``magi-tui fix`` proved for the program of a run, so triage and fix say the same thing (issue 31.7).

A fix runs its own baseline in its own folder (``ROOT/fix_<stamp>/fix.json``); the run being triaged is
usually an earlier one of the same program under the same root. The newest ``fix.json`` beside the run's root
(the folder holding its ``magi_depyf/``, or that folder's ``runs/``) is matched to the run by its script's name
(the tracer records the script, never its arguments) or by being the fix's own baseline run; its kept changes
are then said in triage's words: ``magi-tui fix proved: <change> (recompiles 8→1, same exit code and numbers)``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from msgspec import Struct

from magi_format.layout import RUNS_ROOT_DIR


class FixProof(Struct, frozen=True):
    change: str
    why: str           # the fix's own words: "recompiles 8→1, same exit code and numbers"
    resolved: list[str]  # the worklist ids its run no longer has
    fix_json: str
    best: bool

    def as_json(self) -> dict[str, Any]:
        return {"change": self.change, "why": self.why, "resolved": self.resolved, "fix_json": self.fix_json,
                "best": self.best}


def _root_of(run_dir: Path) -> Path | None:
    """The folder holding the run's ``magi_depyf/`` (``ROOT/magi_depyf/run_<stamp>/model_…``)."""
    for p in run_dir.parents:
        if p.name == RUNS_ROOT_DIR:
            return p.parent
    return None


def _script_name(command: Any) -> str | None:
    if not isinstance(command, list):
        return None
    return next((Path(a).name for a in command if isinstance(a, str) and a.endswith(".py")), None)


def fix_proofs(run_dir: Path, script: str | None) -> list[FixProof]:
    """The kept changes of the newest fix of this run's program, best first; [] when there is none."""
    root = _root_of(run_dir)
    if root is None:
        return []
    from magi_tui.model.sources.fix_file import find_fix

    path, obj, _why = find_fix(root)
    if path is None or not isinstance(obj, dict):
        return []
    base = obj.get("baseline") if isinstance(obj.get("baseline"), dict) else {}
    same_run = isinstance(base, dict) and base.get("run") == str(run_dir)
    if not same_run and (script is None or _script_name(obj.get("command")) != Path(script).name):
        return []
    best = obj.get("best") if isinstance(obj.get("best"), dict) else None
    out = []
    for c in obj.get("candidates") or []:
        if not isinstance(c, dict) or c.get("kept") is not True:
            continue
        resolved = [str(i) for i in c.get("resolved") or [] if isinstance(i, str)]
        out.append(FixProof(str(c.get("change") or "?")[:300], str(c.get("why") or "")[:300], resolved, str(path),
                            best is not None and c.get("change") == best.get("change")))
    return sorted(out, key=lambda p: not p.best)
