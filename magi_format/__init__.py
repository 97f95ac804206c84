"""The run-directory contract, shared by the tracer (which writes it) and the viewer (which reads it).

Dependency-free on purpose: the tracer must never import the viewer, and the viewer must never need
torch. Everything both sides must agree on lives here, once:

* :mod:`magi_format.names`   -- event names (FORMAT.md part A §4, §7) and their parser
* :mod:`magi_format.layout`  -- where things are inside a run directory, and ``MAGI_RUN_DIR=``
* :mod:`magi_format.runname` -- run directory naming (``run_<ts>/model_<i>_<label>_rank_<r>``)
* :mod:`magi_format.safepath` -- turning run-supplied names into paths without leaving the run
* :mod:`magi_format.text`    -- the one ``literal()`` (run strings shown, never obeyed) and durations
* :mod:`magi_format.torch_records` -- torch's structured-trace records as typed values (what the tracer queues)
* :mod:`magi_format.torch_mapping` -- torch's record vocabulary and the record -> event mapping (tracer and logs)
* :mod:`magi_format.torchtext` -- torch's texts in the trace (graph-break reports, tracebacks, recompile reasons)
"""
