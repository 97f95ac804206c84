"""A footer drawn by one widget: the screen's keys on one line, ``? Help`` on the right.

Textual's ``Footer`` mounts one ``FooterKey`` widget per key and mounts them all again each time the
screen's bindings change (focus moves, a screen is pushed): on a freshly pushed screen that is a few
recomposes of half a dozen widgets, each styled by the stylesheet, about as much CPU as reading and
matching two 20,000-line graphs. This bar draws the same keys (the screen's active bindings, one per
action, in the footer's colours, ``? Help`` docked right like :class:`~magi_tui.ui.widgets.footer.MagiFooter`)
as one line of text, repainted only when the list of keys changes. A click on a key presses it.
"""

from __future__ import annotations

from typing import Any, NamedTuple

from rich.style import Style
from rich.text import Text
from textual import events
from textual.screen import Screen
from textual.widget import Widget

HELP_ACTION = "app.help"


class Key(NamedTuple):
    key: str            # the Textual key name (what a click presses)
    shown: str          # as the footer shows it: "esc", "]", "?"
    description: str
    enabled: bool
    help: bool          # the help key: docked on the right


class KeyBar(Widget):
    ALLOW_SELECT = False
    COMPONENT_CLASSES = {"key-bar--key", "key-bar--description"}
    DEFAULT_CSS = """
    KeyBar {
        dock: bottom;
        height: 1;
        color: $footer-foreground;
        background: $footer-background;
    }
    KeyBar > .key-bar--key {
        color: $footer-key-foreground;
        background: $footer-key-background;
        text-style: bold;
    }
    KeyBar > .key-bar--description {
        color: $footer-description-foreground;
        background: $footer-description-background;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self._keys: tuple[Key, ...] = ()
        #: (first column, end column, key) of each key as last drawn, for clicks
        self._spots: list[tuple[int, int, str]] = []

    def on_mount(self) -> None:
        self.screen.bindings_updated_signal.subscribe(self, self._bindings_changed)
        self._keys = self._active_keys()

    def on_unmount(self) -> None:
        self.screen.bindings_updated_signal.unsubscribe(self)

    def _bindings_changed(self, screen: Screen) -> None:
        keys = self._active_keys()
        if keys != self._keys:
            self._keys = keys
            self.refresh()

    def _active_keys(self) -> tuple[Key, ...]:
        """The shown bindings, the first key of each action (``escape`` and ``q`` both going back
        show once, as in the footer); help last."""
        seen: set[str] = set()
        keys: list[Key] = []
        help_key: Key | None = None
        for _node, binding, enabled, _tooltip in self.screen.active_bindings.values():
            if not binding.show or binding.action in seen:
                continue
            seen.add(binding.action)
            item = Key(binding.key, self.app.get_key_display(binding), binding.description, enabled,
                       binding.action == HELP_ACTION)
            if item.help:
                help_key = item
            else:
                keys.append(item)
        return tuple(keys) + ((help_key,) if help_key is not None else ())

    def render(self) -> Text:
        key_style = self.get_component_rich_style("key-bar--key", partial=True)
        desc_style = self.get_component_rich_style("key-bar--description", partial=True)

        def draw(keys: list[Key]) -> tuple[Text, list[tuple[int, int, str]]]:
            text = Text(no_wrap=True, overflow="crop", end="")
            spots = []
            for k in keys:
                start = text.cell_len
                dim = Style(dim=not k.enabled)
                text.append(f" {k.shown} ", key_style + dim)
                if k.description:
                    text.append(f"{k.description} ", desc_style + dim)
                spots.append((start, text.cell_len, k.key))
            return text, spots

        line, spots = draw([k for k in self._keys if not k.help])
        docked, docked_spots = draw([k for k in self._keys if k.help])
        if docked_spots:  # on the right; the other keys are cut to the room left, as the footer cuts them
            room = max(0, self.size.width - docked.cell_len)
            line.truncate(room, overflow="crop", pad=True)
            spots = [(a, min(b, room), key) for a, b, key in spots if a < room]
            spots += [(room + a, room + b, key) for a, b, key in docked_spots]
            line.append_text(docked)
        self._spots = spots
        return line

    def on_click(self, event: events.Click) -> None:
        for start, end, key in self._spots:
            if start <= event.x < end:
                event.stop()
                self.app.simulate_key(key)
                return
