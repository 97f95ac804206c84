"""A key right after ``q`` does nothing (hostile round 3, item 2).

In a terminal, ``qc`` typed fast or pasted arrives in one read: both keys are forwarded to the focused widget
before ``q``'s action runs, so ``c`` used to push a screen into an app that was being torn down (MountError,
NoMatches, exit 1). Posted to the app here exactly as the terminal driver posts them: both at once."""

from __future__ import annotations

import pytest
from textual import events

from magi_tui.ui.app import MagiApp
from tests.support.paths import COLD
from tests.support.pilot import loaded_run_screen, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")


@pytest.mark.parametrize("then", ["c", "i", "w", "n", "f", "p", "d", "T", "t", "question_mark", "m", "o"])
async def test_a_key_typed_with_q_does_not_crash(then):
    app = MagiApp(COLD)
    async with app.run_test(size=(100, 30)) as pilot:
        await loaded_run_screen(pilot)
        for key in ("q", then):  # one read of the terminal: posted together, nothing awaited between
            char = "?" if then == "question_mark" and key == then else (key if len(key) == 1 else None)
            app.post_message(events.Key(key, char))
        await wait_for(pilot, lambda: app._exit, what="the app to exit")
        await pilot.pause(0.3)
    assert app._exception is None, repr(app._exception)
    assert app.return_code == 0
