"""Following runs and programs while they happen — no Textual here.

* :mod:`magi_tui.live.follower` -- follow one run directory as it is written (watch + poll), reporting
  typed events (updates coalesced);
* :mod:`magi_tui.live.runner`   -- run a program under the tracer, collect its output, stop it,
  reporting typed events;
* :mod:`magi_tui.live.scan`     -- look for runs appearing under a root;
* :mod:`magi_tui.live.trial`    -- run a program once, traced, with torch's switches overridden, and
  judge it (exit code, or printed numbers against a reference);
* :mod:`magi_tui.live.bisect`   -- ``magi-tui bisect``: trials that name the layer, stage and graph.

The UI subscribes and turns the events into Textual messages.
"""
