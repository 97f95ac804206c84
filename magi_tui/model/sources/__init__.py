"""Sources: what reads a run from disk -- the timeline, TORCH_TRACE and debug-folder readers, safe file and
text access, the session record, discovery of runs under a root, MagiCompiler's cache sidecars.

A source knows files and the event records (``model.events``); it never imports the run model, the
analysis or an output (``tests/test_layers.py``)."""
