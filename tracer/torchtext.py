"""Moved: torch's text grammars live in :mod:`magi_format.torchtext` (one grammar for the tracer and the
viewer). This name stays only until ``tracer/mapping.py`` (being moved into ``magi_format`` in parallel)
imports it from there; do not add to it."""

from magi_format.torchtext import *  # noqa: F401,F403
from magi_format.torchtext import _gb_message_fields  # noqa: F401
