"""The footer, with ``? Help`` always on screen.

Textual's footer lists the active keys left to right and cuts what does not fit, so at 80 columns the
app-level help key (listed last) disappeared. Here it is docked on the right, like the palette key,
and dropped from the flowing list; the other keys keep the catalogue's order, remapped or not. A key
that does not fit whole is left out rather than cut mid-word (80 columns showed ``F Fi``): every key is
in ``?`` and the palette.
"""

from __future__ import annotations

from typing import Any

from textual.app import ComposeResult
from textual.screen import Screen
from textual.widgets import Footer
from textual.widgets._footer import FooterKey

from magi_tui.ui.actions import CATALOGUE

HELP_ACTION = "app.help"
#: keys appear in the catalogue's order: a key remapped with --keymap is re-added by Textual at the end of the
#: bindings, where 80 columns cut it off -- it kept its place in ``?`` but vanished from the footer
_ORDER: dict[str, int] = {}
for _i, _a in enumerate(CATALOGUE):
    _ORDER.setdefault(_a.action.removeprefix("app."), _i)


class MagiFooter(Footer):
    DEFAULT_CSS = """
    MagiFooter FooterKey.-help {
        dock: right;
        padding-left: 1;
    }
    """

    def __init__(self, **kwargs: Any) -> None:
        kwargs.setdefault("show_command_palette", False)  # ctrl+p is in help and the README; room for ?
        super().__init__(**kwargs)

    _recompose_due = False

    def bindings_changed(self, screen: Screen) -> None:
        """Not while another screen is on top: pushing one (``d``'s diff) bumps the covered screen's
        bindings, and remounting its ten keys then was paid just after ``d``. Textual refreshes the bindings again when the screen is back on top.

        Changes before the next refresh make one recompose, not one each (Textual's footer queues one
        per change: a run screen's start made three, back to back)."""
        self._bindings_ready = True
        if not screen.is_active or not screen.app.app_focus:
            return
        if self.is_attached and screen is self.screen and not self._recompose_due:
            self._recompose_due = True
            self.call_after_refresh(self._recompose_once)

    _composed_for: tuple | None = None

    def _keys_sig(self) -> tuple:
        """What :meth:`compose` makes the keys of: the screen's active bindings (their node, for the
        order), the footer's compactness."""
        rank: dict[int, int] = {}
        return (self.compact, self.show_command_palette, tuple(
            (rank.setdefault(id(node), len(rank)), b.key, b.action, b.description, b.show, b.group, enabled, tip)
            for node, b, enabled, tip in self.screen.active_bindings.values()))

    async def _recompose_once(self) -> None:
        """Recompose only when the keys would change: Textual reports a change of bindings on each move
        of focus and each mount, and a run screen's start recomposed the same ten keys twice
        (ten widgets made, styled and mounted each time)."""
        self._recompose_due = False
        sig = self._keys_sig()
        if sig == self._composed_for:
            return
        self._composed_for = sig
        await self.recompose()

    async def recompose(self) -> None:
        await super().recompose()
        self.call_after_refresh(self._fit)

    def on_resize(self) -> None:
        self.call_after_refresh(self._fit)

    def _fit(self) -> None:
        """Show the flowing keys, in order, while each fits whole beside the docked help key."""
        keys = list(self.query(FooterKey))
        room = self.size.width - sum(w.outer_size.width for w in keys if w.has_class("-help"))
        for w in keys:
            if w.has_class("-help"):
                continue
            need = w.render().cell_len + w.styles.margin.left + w.styles.margin.right
            w.display = need <= room
            room -= need if w.display else room  # keys after one left out are left out too: order is meaning

    def compose(self) -> ComposeResult:
        help_key = None
        widgets = list(super().compose())
        # the focused widget's keys first, then its parents' (Textual's order), each node's in catalogue order
        node_rank: dict[int, int] = {}
        action_node: dict[str, int] = {}
        for node, binding, _enabled, _tip in self.screen.active_bindings.values():
            node_rank.setdefault(id(node), len(node_rank))
            action_node.setdefault(binding.action, id(node))

        def place(w: FooterKey) -> tuple[int, int]:
            return (node_rank.get(action_node.get(w.action, -1), len(node_rank)),
                    _ORDER.get(w.action.removeprefix("app."), len(_ORDER)))

        keys = sorted((w for w in widgets if isinstance(w, FooterKey)), key=place)
        for w in keys:
            # born in the footer's style: a key starts compact and is bound to the footer's (not compact)
            # only once mounted, so each key's styles were applied three times per recompose
            w.set_reactive(FooterKey.compact, self.compact)
            w.set_class(self.compact, "-compact", update=False)
        ordered = iter(keys)
        for widget in widgets:
            if isinstance(widget, FooterKey):
                widget = next(ordered)
            if isinstance(widget, FooterKey) and widget.action == HELP_ACTION:
                help_key = widget
                continue
            yield widget
        if help_key is not None:
            help_key.add_class("-help")
            yield help_key
