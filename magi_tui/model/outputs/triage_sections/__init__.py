"""The triage findings as data, built once from the analysis: a list of :class:`Section` (title, count,
rows), each :class:`Row` made of plain-text :class:`Span` s with a *role* ('bad', 'warn', 'key',
'path', …) and a navigation target (the event Enter / f / n / p jump to). Pure Python, no Textual: the
triage panel maps roles to styles and rows to list options; a test can read what the panel lists
without starting the app.

The same walk builds the text report's lines (``report=True``: :func:`magi_tui.model.outputs.report.triage_text`
prints them) and the section list of ``triage --json`` (``sections``), so the panel, the text and the
JSON cannot disagree on which findings there are, in which order, how many.

Names from the run are made literal in the panel's rows and summary (:func:`magi_format.text.literal`):
a frame called ``[red]x`` is shown as written, never as markup. The report's lines hold the run's text
as it is; the CLI makes the whole report literal when it prints it (newlines in a name kept).

A section builds at most ``cap`` rows (a recompile storm must not cost a row per recompile) unless it
is in ``expanded``; :attr:`Section.left` says how many items it left out.

The package: :mod:`.data` (spans, rows, sections), :mod:`.build` (the walk and the panel's rows),
:mod:`.report_lines` (the text report's lines), :mod:`.summary` (the summary above the findings).
"""

from magi_tui.model.outputs.triage_sections.build import failure_spans, folded_row, triage_sections
from magi_tui.model.outputs.triage_sections.data import ROLES, Row, Section, Span, first_failure, frame_calls_text
from magi_tui.model.outputs.triage_sections.summary import CHECK_ICONS, CHECK_ROLES, STATUS_ROLES, triage_summary

__all__ = ["CHECK_ICONS", "CHECK_ROLES", "ROLES", "STATUS_ROLES", "Row", "Section", "Span", "failure_spans",
           "first_failure", "folded_row", "frame_calls_text", "triage_sections", "triage_summary"]
