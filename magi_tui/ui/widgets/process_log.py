"""The program's output (``magi-tui run``): a header line with its state, then its stdout/stderr.

Lines are already cleaned by :func:`magi_tui.live.runner.clean_line` (no ANSI, control characters
visible) and go into a ``Log`` (plain text, never markup). Lines are batched: a chatty program
costs one ``write_lines`` per frame, and nothing at all while it is quiet.
"""

from __future__ import annotations

from typing import Any

from rich.text import Text
from textual.app import ComposeResult
from textual.containers import Vertical
from textual.timer import Timer
from textual.widgets import Log, Static

from magi_format.text import literal
from magi_tui.live.runner import OutputLine, ProgramRunner, RunnerEvent

FLUSH_S = 1 / 30


class ProcessLog(Vertical):
    """Header + log of one :class:`ProgramRunner`; replays what was printed before it mounted."""

    DEFAULT_CSS = """
    ProcessLog { height: 12; border-top: solid $primary; }
    ProcessLog.-full { height: 1fr; }
    ProcessLog > #process-header { height: 1; padding: 0 1; background: $boost; }
    ProcessLog > Log { height: 1fr; }
    """

    def __init__(self, runner: ProgramRunner, **kwargs: Any) -> None:
        super().__init__(**kwargs)
        self.runner = runner
        self._pending: list[str] = []
        self._flush_timer: Timer | None = None

    def compose(self) -> ComposeResult:
        yield Static(id="process-header")
        yield Log(max_lines=10_000, highlight=False, id="process-output")

    def on_mount(self) -> None:
        for log in self.query(Log):  # (absent only when the app is shutting down)
            log.write_lines([self._fmt(line) for line in self.runner.lines])
        self.runner.subscribe(self._on_runner)
        self.refresh_header()

    def on_unmount(self) -> None:
        self.runner.unsubscribe(self._on_runner)

    @staticmethod
    def _fmt(line: OutputLine) -> str:
        return line.text if line.stream != "magi" else f"▸ {line.text}"

    def _on_runner(self, event: RunnerEvent) -> None:
        if isinstance(event, OutputLine):
            self._pending.append(self._fmt(event))
            if self._flush_timer is None:
                self._flush_timer = self.set_timer(FLUSH_S, self._flush)
        else:
            self.refresh_header()

    def _flush(self) -> None:
        self._flush_timer = None
        if self._pending:
            lines, self._pending = self._pending, []
            for log in self.query(Log):
                log.write_lines(lines)

    def refresh_header(self) -> None:
        r = self.runner
        t = Text(end="")
        t.append(" program ", style="bold reverse")
        t.append(" ")
        if r.returncode is None:
            t.append(r.status_text(), style="bold green" if r.pid else "cyan")
        else:
            t.append(r.status_text(), style="bold green" if r.returncode == 0 else "bold red")
        t.append("  " + literal(r.command_text, 120), style="dim")
        t.append("   l hide · ctrl+c stop" if r.running else "   l hide", style="dim")
        for header in self.query("#process-header").results(Static):
            header.update(t)

    @property
    def text(self) -> str:
        """Everything shown (tests)."""
        self._flush()
        return "\n".join(self.query_one(Log).lines)
