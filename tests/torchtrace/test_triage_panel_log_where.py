"""The triage panel's "Look first" on a TORCH_TRACE log names the log and line, as the text report's
``open: LOG:line`` does -- not a folder inside ``timeline_events/``, which a log does not have."""

from __future__ import annotations

import pytest

from magi_tui.ui.app import MagiApp
from tests.support.paths import TORCH_TRACE
from tests.support.pilot import loaded_run_screen, screen_text, wait_for

LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"
pytestmark = pytest.mark.usefixtures("torch_trace_dir")


async def test_look_first_on_a_log_names_the_log_and_line():
    app = MagiApp(LOG)
    async with app.run_test(size=(200, 50)) as pilot:
        await loaded_run_screen(pilot)
        await wait_for(pilot, lambda: "Look first" in screen_text(app), what="the triage panel")
        text = screen_text(app)
        assert "graph_breaks_recompiles_failure.log:" in text
        assert "timeline_events/files/" not in text
