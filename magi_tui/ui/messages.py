"""Messages that carry an event from a widget to its screen."""

from __future__ import annotations

from textual.message import Message

from magi_tui.model.events import Event


class LiveEvent(Message):
    """What the run follower (:mod:`magi_tui.live.follower`) reported, delivered on the UI loop."""

    def __init__(self, event: object) -> None:
        super().__init__()
        self.event = event


class EventMessage(Message):
    """A widget points at one event (highlighted, chosen, or to jump to)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
