"""A newcomer's first minutes in a real terminal (issue 32, items 9 and 10): a word typed into the runs list is
its filter, failures read under NO_COLOR (checked on the cells tmux holds: attributes and colours), and
``scripts/demo.sh`` says how far it got while it compiles."""

from __future__ import annotations

import re
import shutil
import time
from dataclasses import dataclass

import pytest

from tests.e2e.tmux import MAGI, Tmux
from tests.support.paths import COLD, ROOT, TORCH_TRACE

pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.slow,
]

LOG = TORCH_TRACE / "graph_breaks_recompiles_failure.log"


# -- what a cell looks like: tmux's SGR sequences, read back ---------------------------------------------------

@dataclass
class Cell:
    ch: str
    bold: bool
    reverse: bool
    fg: int | None  # a 256-colour index (None: the terminal's default)
    bg: int | None


def _grey(index: int | None, default: int) -> float:
    """The brightness (0..255) of a 256-colour index, as xterm draws it."""
    if index is None:
        return default
    if index >= 232:
        return 8 + 10 * (index - 232)
    if index >= 16:
        r, g, b = ((index - 16) // 36, (index - 16) // 6 % 6, (index - 16) % 6)
        r, g, b = ((0 if v == 0 else 55 + 40 * v) for v in (r, g, b))
        return 0.299 * r + 0.587 * g + 0.114 * b
    return (0, 38, 75, 113, 15, 53, 90, 192, 128, 76, 150, 226, 29, 105, 179, 255)[index]  # xterm's 16, as greys


def cells(line: str) -> list[Cell]:
    out: list[Cell] = []
    bold = reverse = False
    fg = bg = None
    for m in re.finditer(r"\x1b\[([0-9;]*)m|([^\x1b])", line):
        if m.group(2) is not None:
            out.append(Cell(m.group(2), bold, reverse, fg, bg))
            continue
        codes = [int(c) if c else 0 for c in m.group(1).split(";")]
        i = 0
        while i < len(codes):
            c = codes[i]
            if c == 0:
                bold = reverse = False
                fg = bg = None
            elif c == 1:
                bold = True
            elif c == 22:
                bold = False
            elif c == 7:
                reverse = True
            elif c == 27:
                reverse = False
            elif c == 39:
                fg = None
            elif c == 49:
                bg = None
            elif 30 <= c <= 37:
                fg = c - 30
            elif 40 <= c <= 47:
                bg = c - 40
            elif c in (38, 48) and i + 2 < len(codes) and codes[i + 1] == 5:
                if c == 38:
                    fg = codes[i + 2]
                else:
                    bg = codes[i + 2]
                i += 2
            elif c in (38, 48) and i + 4 < len(codes) and codes[i + 1] == 2:
                r, g, b = codes[i + 2:i + 5]
                idx = 232 + max(0, min(23, round((0.299 * r + 0.587 * g + 0.114 * b - 8) / 10)))
                if c == 38:
                    fg = idx
                else:
                    bg = idx
                i += 4
            i += 1
    return out


def contrast(c: Cell) -> float:
    """How far apart (0..1) the text's brightness and its background's are, reverse video applied."""
    fg, bg = _grey(c.fg, 229), _grey(c.bg, 0)
    return abs(fg - bg) / 255


def word_cells(screen: str, word: str, nth: int = 0) -> list[Cell]:
    """The cells of the ``nth`` ``word`` on the screen (as the plain text reads it)."""
    seen = 0
    for line in screen.splitlines():
        row = cells(line)
        text = "".join(c.ch for c in row)
        start = text.find(word)
        while start >= 0:
            if seen == nth:
                return row[start:start + len(word)]
            seen += 1
            start = text.find(word, start + 1)
    plain = re.sub(r"\x1b\[[0-9;]*m", "", screen)
    raise AssertionError(f"{word!r} (#{nth}) not on screen:\n{plain}")


# -- the runs list: typing ------------------------------------------------------------------------------------

@pytest.mark.usefixtures("fixtures_dir")
def test_a_word_typed_into_the_runs_list_is_its_filter_at_80x24():
    t = Tmux(80, 24, f"{MAGI} {COLD.parent.parent}; sleep 30")  # two runs
    try:
        screen = t.wait_for("2 run(s)", "esc Quit")
        hint = next(ln for ln in screen.splitlines() if "2 run(s)" in ln)
        assert hint.rstrip().endswith("s sort (started)"), hint  # the whole hint: nothing cut at 80 columns
        t.keys("item")  # one write, as typed fast or pasted: m is the list's Mark key
        screen = t.wait_for("item")
        time.sleep(0.5)
        screen = t.screen()
        assert "▊  item " in screen, screen  # the filter box holds the whole word
        assert "[A]" not in screen and "marked" not in screen, screen  # nothing was marked
        t.keys("Escape")  # the filter cleared, the list has the keys again
        t.wait_for("type to filter")
        t.keys("m")
        t.wait_for("[A]")
    finally:
        t.kill()


# -- NO_COLOR: what failed can be read, and stands out -------------------------------------------------------

@pytest.mark.usefixtures("torch_trace_dir")
def test_failures_are_readable_and_stand_out_with_no_color():
    t = Tmux(100, 30, f"env NO_COLOR=1 {MAGI} {LOG}; sleep 30")
    try:
        t.wait_for("Status FAILED", "NOT recovered")
        time.sleep(0.5)
        screen = t.screen_ansi()
        for word, nth in (("FAILED", 0), ("failed", 0), ("NOT recovered", 0)):
            for c in word_cells(screen, word, nth):
                assert c.bold and c.reverse, (word, c)  # stands out without colour
                assert contrast(c) >= 0.4, (word, c)   # and is no grey on grey (it was 237 on 234)
        # the exception, in the triage panel: "Look first", the summary, and the failure's own row (bold there)
        for nth in range(3):
            exc = word_cells(screen, "BackendCompilerFailed", nth)
            assert all(contrast(c) >= 0.4 for c in exc), (nth, exc)
        assert all(c.bold for c in exc), exc
        # every letter on screen can be read: none within 0.2 of its background's brightness
        faint = [c for line in screen.splitlines() for c in cells(line)
                 if c.ch.isalnum() and contrast(c) < 0.2]
        assert not faint, faint[:5]
        t.keys("f")  # the failure's own event: the tree's mark and the detail's exception
        screen = t.wait_for("exception_type")
        screen = t.screen_ansi()
        value = word_cells(screen, "BackendCompilerFailed", 1)  # exception_type's value
        assert all(c.bold and contrast(c) >= 0.4 for c in value), value
    finally:
        t.kill()


# -- scripts/demo.sh: progress while it compiles -----------------------------------------------------------

TINY = '''
import time
import torch

def f(x):
    return torch.sin(x) + 1

compiled = torch.compile(f, backend="eager", dynamic=False)
for n in (2, 3, 4, 5):  # a compile per size, a second apart
    compiled(torch.randn(n))
    time.sleep(1.0)
print("tiny demo done")
'''


def test_demo_script_says_how_far_it_got_then_opens_the_run(tmp_path):
    pytest.importorskip("torch")
    demo = tmp_path / "tiny.py"
    demo.write_text(TINY)
    root = tmp_path / "runs"
    t = Tmux(250, 40, f"cd {ROOT} && MAGI_DEMO_ROOT={root} MAGI_DEMO_PROGRESS_S=0.5 bash scripts/demo.sh {demo}; "
                      "sleep 60")
    try:
        t.wait_for("tracing ", timeout=60)
        t.wait_for("esc Back", timeout=240)  # the app, on the demo's run
        t.keys("q")
        screen = t.wait_for("traced in", timeout=20)  # back on the terminal's own screen: what it printed
        lines = screen.splitlines()
        progress = [ln for ln in lines if re.match(r"\s+\d+ s: ", ln)]
        assert progress, screen
        recorded = [ln for ln in progress if re.search(r"\d+ events recorded, compile \d+/\d+, now at \w+", ln)]
        assert recorded, screen  # which compile, how many events, the step it is in
        assert "a real torch.compile on CPU" in screen and str(root) in screen, screen
    finally:
        t.kill()
