"""The footer, with ``? Help`` always on screen.

Textual's footer lists the active keys left to right and cuts what does not fit, so at 80 columns the
app-level help key (listed last) disappeared. Here it is docked on the right, like the palette key,
and dropped from the flowing list.
"""

from __future__ import annotations

from textual.widgets import Footer
from textual.widgets._footer import FooterKey

HELP_ACTION = "app.help"


class MagiFooter(Footer):
    DEFAULT_CSS = """
    MagiFooter FooterKey.-help {
        dock: right;
        padding-left: 1;
    }
    """

    def __init__(self, **kwargs) -> None:
        kwargs.setdefault("show_command_palette", False)  # ctrl+p is in help and the README; room for ?
        super().__init__(**kwargs)

    def bindings_changed(self, screen) -> None:
        """Not while another screen is on top: pushing one (``d``'s diff) bumps the covered screen's
        bindings, and remounting its ten keys then cost ~30 ms of CPU just after ``d`` (a third of
        it). Textual refreshes the bindings again when the screen is back on top."""
        if not screen.is_active:
            self._bindings_ready = True
            return
        super().bindings_changed(screen)

    def compose(self):
        help_key = None
        for widget in super().compose():
            if isinstance(widget, FooterKey) and widget.action == HELP_ACTION:
                help_key = widget
                continue
            yield widget
        if help_key is not None:
            help_key.add_class("-help")
            yield help_key
