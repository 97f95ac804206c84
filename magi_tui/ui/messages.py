"""Messages that carry an event from a widget to its screen."""

from __future__ import annotations

from textual.message import Message

from magi_tui.model.events import Event


class EventMessage(Message):
    """A widget points at one event (highlighted, chosen, or to jump to)."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event
