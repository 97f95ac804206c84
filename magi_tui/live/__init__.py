"""Following runs and programs while they happen — no Textual here.

* :mod:`magi_tui.live.follower` -- follow one run directory as it is written (watch + poll), reporting
  typed events (updates coalesced);
* :mod:`magi_tui.live.runner`   -- run a program under the tracer, collect its output, stop it,
  reporting typed events;
* :mod:`magi_tui.live.scan`     -- look for runs appearing under a root.

The UI subscribes and turns the events into Textual messages.
"""
