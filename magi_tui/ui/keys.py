"""Key bindings shared by several widgets (vim-style movement for trees)."""

from __future__ import annotations

from textual.binding import Binding

#: j/k/g/G on a Tree: every tree in the app moves the same way
TREE_VIM_KEYS = [
    Binding("j", "cursor_down", "Down", show=False),
    Binding("k", "cursor_up", "Up", show=False),
    Binding("g", "scroll_home", "Top", show=False),
    Binding("G", "scroll_end", "Bottom", show=False),
]
