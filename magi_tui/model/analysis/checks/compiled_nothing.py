"""A model that compiled nothing: every compile closed and not one captured a graph with an op
(:attr:`~magi_tui.model.triage.Triage.compiled_nothing`), so the whole program ran as Python while every
count looked fine ("4 frames, one compile each"). The classic case is ``torch.compile(DDP(model))``: Dynamo
breaks on DDP's own forward (functions it is told to skip) and the model runs 100 % eagerly.

What Dynamo gave up on is read from the run's own graph breaks (torch's words, with where); advice is given
only where a real run proved it on the pinned torch (:data:`ADVICE`, each with the test that proves it).
"""

from __future__ import annotations

from collections.abc import Sequence

from msgspec import Struct

from magi_format.lazyre import lazy_re
from magi_tui.model.analysis.checks.results import BreakEntry, CompiledNothing, FrameRow
from magi_tui.model.run import RunModel


class Advice(Struct, frozen=True):
    """A proven change for a run that compiled nothing, chosen when ``marker`` is in what Dynamo gave up on."""

    marker: str
    text: str
    proven_on: tuple[str, ...]
    proof: str   # the test that runs both programs and shows the graph with ops


ADVICE: tuple[Advice, ...] = (
    Advice("DistributedDataParallel",
           "compile the module inside the wrapper: DDP(torch.compile(model)) instead of torch.compile(DDP(model)) "
           "(Dynamo skips DDP's own forward, so the wrapped model is never traced)",
           ("2.13.0",), "tests/explain/test_verdicts.py::test_ddp_compiled_nothing_and_the_proven_fix"),
)


def _text(b: BreakEntry) -> str:
    return " ".join(x for x in (b.reason, b.explanation or "", *b.hints) if x)


_STDLIB = lazy_re(r"[/\\]lib[/\\]python\d+(?:\.\d+)?[/\\]")


def users_own(path: str | None) -> bool:
    """A file the user edits: not an installed package, not the standard library (``contextlib.py``)."""
    from magi_format.torchtext import is_library

    return bool(path) and not is_library(path or "") and not _STDLIB.search(path or "")


def compiled_nothing(run: RunModel, frames: Sequence[FrameRow], worklist: Sequence[BreakEntry]) -> CompiledNothing:
    """The finding: the frames Dynamo compiled, what made it give up (graph breaks, then restarts without
    one), the user's own line to start from (the first break in a file of theirs), and the proven advice for
    it when there is one."""
    gave_up = []
    for b in worklist[:3]:
        where = f" at {b.where}" if b.file else ""
        if b.in_user_code is False and b.call_site:  # inside a library: the user's own line too
            where += f" (called from {b.call_site[0]}:{b.call_site[1]})"
        gave_up.append(f"{b.reason}{where} ×{b.count}")
    if not gave_up:
        gave_up = list(dict.fromkeys(r.reason for r in run.triage.restarts if r.reason))[:3]
    seen = " ".join([*(_text(b) for b in worklist), *(r.reason for r in run.triage.restarts)])
    advice = next((a.text for a in ADVICE if a.marker in seen), None)
    own = next((b for b in worklist if users_own(b.file)), None)
    at = own or (worklist[0] if worklist else None)
    first = at.events[0] if at is not None and at.events else (frames[0].first_event if frames else None)
    place = (own.file, own.line) if own is not None else None
    return CompiledNothing([f.frame for f in frames], gave_up, advice, first, place)
