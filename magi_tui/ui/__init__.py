"""Textual screens and widgets. Parses no files: everything comes from :mod:`magi_tui.model`."""
