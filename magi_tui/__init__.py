"""magi-tui: a terminal explorer for torch.compile runs.

Three rooms: ``magi_tui.model`` (pure Python: run dir -> events -> tree / pairs / triage),
``magi_tui.ui`` (Textual screens and widgets) and the ``tracer`` package beside it.
"""

__version__ = "0.1.0"
