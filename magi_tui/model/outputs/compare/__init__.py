"""Run vs run: what changed between two compiles (``magi-tui compare A B`` and the compare screen).

Built on the triage analysis (:func:`magi_tui.model.analysis.checks.analyse`) of each side; nothing here
re-derives what it already says. A and B may come from different processes, models or machines, so
nothing is matched by position in the file nor by torch's frame id (which counts code objects in the
order one process met them):

* **frames** are aligned by code object: name + file name + first line where known (then name alone
  when that is unique on both sides, then by order of appearance among frames of that name);
* **compiles** of an aligned frame by torch's frame compile id (``0/1`` → the frame's compile 1), with
  the Dynamo graph's op count and a hash of its captured graph (addresses and generated names masked)
  where recorded;
* **graph breaks** by graph-break id (else torch's reason) and user file name:line;
* **recompiles** by frame and the guard that failed (compile ids masked), as a multiset;
* **failures** by lifecycle, exception type and the first line of the message;
* **passes and pieces** (lifecycles with a graph after them: a custom FX pass, ``graph_split``, a
  piece's ``compiler_compile``) by aligned frame, frame compile id, subgraph / piece index, lifecycle
  name and occurrence: whether the graph after it differs between A and B, and whether the pass
  changed its graph on each side.

The package, by concern: :mod:`.graphs` (graph files, read on a budget and hashed), :mod:`.sides` (one
run indexed; frames aligned), :mod:`.comparison` (the matching) and :mod:`.text` (rows and text).
"""

from magi_tui.model.outputs.compare.comparison import (
    Comparison,
    FrameCompare,
    PassCompare,
    break_key,
    compare_runs,
    failure_key,
    one_run,
    recompile_key,
)
from magi_tui.model.outputs.compare.graphs import (
    GRAPH_MAX_LINES,
    MAX_GRAPH_READS,
    GraphRef,
    _GraphReader,
    _norm,
    graph_ref,
)
from magi_tui.model.outputs.compare.sides import CompileFacts, PassFacts, Side, align_frames, side_facts
from magi_tui.model.outputs.compare.text import compare_lines, compare_rows, compare_text

__all__ = ["GRAPH_MAX_LINES", "MAX_GRAPH_READS", "CompileFacts", "Comparison", "FrameCompare", "GraphRef",
           "PassCompare", "PassFacts", "Side", "_GraphReader", "_norm", "align_frames", "break_key",
           "compare_lines", "compare_rows", "compare_runs", "compare_text", "failure_key", "graph_ref", "one_run",
           "recompile_key", "side_facts"]
