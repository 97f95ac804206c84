"""With NO_COLOR the words that matter most (NOT recovered, the exception) stand out by bold / reverse,
never by colour alone, and are never dim (issue 20.12)."""

from __future__ import annotations

import pytest
from rich.style import Style
from rich.text import Text

from magi_tui.model.analysis.checks import analyse
from magi_tui.model.run import RunModel
from tests.support.paths import TORCH_TRACE

pytest.importorskip("textual")
LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"


def styles_of(text: Text, word: str) -> list[Style]:
    i = text.plain.index(word)
    out = []
    for span in text.spans:
        if span.start <= i < span.end:
            s = span.style
            out.append(s if isinstance(s, Style) else Style.parse(str(s)))
    return out


def stands_out(text: Text, word: str) -> bool:
    st = styles_of(text, word)
    return any(s.bold or s.reverse or s.underline for s in st) and not any(s.dim for s in st)


@pytest.mark.usefixtures("torch_trace_dir")
def test_failure_words_stand_out_without_colour():
    from magi_tui.ui.labels import event_label
    from magi_tui.ui.widgets.triage_panel import TriagePanel

    run = RunModel(LOG).load()
    a = analyse(run)
    f = next(c for c in a.problems if not c.recovered).head
    t = TriagePanel._failure_text(f)
    assert stands_out(t, "NOT recovered") and stands_out(t, f.exception_type)
    msg = " ".join(f.message.split())[:40]
    assert not any(s.dim for s in styles_of(t, msg))  # the exception's words: plain, not grey
    label = event_label(f.event)
    assert stands_out(label, f.exception_type)
