"""The file view shows a highlighted file whose last lines are blank (rich's highlighter drops them: the
window is padded back to the file's length)."""

from __future__ import annotations

from textual.app import App, ComposeResult

from magi_tui.model.sources.textfile import TextFile
from magi_tui.ui.widgets.file_view import FileLines
from tests.support.pilot import screen_text


class _LinesApp(App[None]):
    def compose(self) -> ComposeResult:
        yield FileLines()


async def test_a_python_file_ending_in_blank_lines_is_shown() -> None:
    app = _LinesApp()
    async with app.run_test(size=(60, 10)) as pilot:
        lines = app.query_one(FileLines)
        tf = TextFile.from_text("tail.py", "def f():\n    return 1\n\n\n")
        lines.set_file(tf, "python")
        await pilot.pause()
        assert "return 1" in screen_text(app)
        assert len(lines._window(0)) == tf.line_count == 4
