"""Deprecated: vim keys now come from :mod:`magi_tui.ui.actions` (kept until every widget uses it)."""

from __future__ import annotations

from magi_tui.ui.actions import vim_bindings

TREE_VIM_KEYS = vim_bindings(down="cursor_down", up="cursor_up", top="scroll_home", bottom="scroll_end")
