"""Evidence a check gathers for itself, as the run is read: the seam that makes a new check three files (its
evidence, its rule in ``rules.py``, its row in docs/HEADLESS.md's rule table; docs/ARCHITECTURE.md,
"Add a check").

A gatherer is a class registered with :func:`gatherer`. The analysis' one pass over the events
(:class:`~magi_tui.model.analysis.checks.fold.TimelineFold`) makes one of each per run, binds it to the run,
hands it every lifecycle's end (an ``after`` or ``failed`` event, as it is read: a streamed headless load
keeps no event list, so a gatherer keeps what it needs, bounded), and at the end of the analysis asks it
for its :meth:`Gatherer.result`. A rule reads that with ``c.evidence(TheGatherer)``.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, TypeVar

if TYPE_CHECKING:
    from magi_tui.model.events import Event
    from magi_tui.model.run import RunModel

__all__ = ["GATHERERS", "Gatherer", "gatherer"]


class Gatherer:
    """One check's evidence. Subclasses override what they need; each method is called on the reading
    thread, once per run for :meth:`bind` and :meth:`result`."""

    def bind(self, run: RunModel) -> None:
        """The run whose events follow (to read an event's attributes back: ``evidence.event_attrs``)."""

    def closed(self, ev: Event) -> None:
        """A lifecycle ended (``ev.phase`` is ``after`` or ``failed``; ``ev.lifecycle`` is set)."""

    def result(self) -> Any:
        """What the rule reads (a Struct, a list, None when there is nothing to say)."""
        return None


#: every registered gatherer, in registration order
GATHERERS: list[type[Gatherer]] = []

G = TypeVar("G", bound=type[Gatherer])


def gatherer(cls: G) -> G:
    """Register ``cls``: every run's analysis gathers it."""
    assert cls not in GATHERERS, cls
    GATHERERS.append(cls)
    return cls
