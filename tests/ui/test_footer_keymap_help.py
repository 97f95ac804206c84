"""Papercuts of hostile round 3: a key remapped with ``--keymap`` keeps its place in the footer (Textual re-adds
remapped bindings last, so at 80 columns they were cut off), and ``?`` titles its sections in words, not with
widget class names (``FileLines``, ``CFTree``)."""

from __future__ import annotations

import re

import pytest

from magi_tui.ui.app import MagiApp
from magi_tui.ui.screens.help import HelpScreen, describe_keys
from tests.support.paths import COLD
from tests.support.pilot import loaded_run_screen, screen_text, wait_for

pytestmark = pytest.mark.usefixtures("fixtures_dir")


async def _footer(tmp_path, keymap: str | None) -> str:
    km = None
    if keymap is not None:
        km = tmp_path / "keymap.toml"
        km.write_text(keymap)
    app = MagiApp(COLD, keymap=str(km) if km else None)
    async with app.run_test(size=(80, 24)) as pilot:
        await loaded_run_screen(pilot)
        await pilot.pause(0.3)
        return screen_text(app).splitlines()[-1]


async def test_a_remapped_key_keeps_its_place_in_the_footer(tmp_path):
    plain = await _footer(tmp_path, None)
    assert "f First failure" in plain and "T Triage" in plain
    remapped = await _footer(tmp_path, '[keys]\nfirst_failure = "F1"\ntriage = "ctrl+t"\n')
    assert "F1 First failure" in remapped and "^t Triage" in remapped, remapped
    # the same keys in the same order: only the key names changed
    assert remapped.index("First failure") < remapped.index("Triage")
    assert re.findall(r"[A-Z][a-z]+(?: [a-z]+)?", remapped)[:4] == re.findall(r"[A-Z][a-z]+(?: [a-z]+)?", plain)[:4]


async def test_help_sections_are_titled_in_words(tmp_path):
    app = MagiApp(COLD)
    async with app.run_test(size=(120, 40)) as pilot:
        screen = await loaded_run_screen(pilot)
        titles = [t for t, _ in describe_keys(screen)]
        assert "Run screen" in titles and "Event tree" in titles and "Open file" in titles, titles
        assert not [t for t in titles if re.fullmatch(r"[A-Za-z]+", t) and re.search(r"[a-z][A-Z]", t)], titles
        await pilot.press("question_mark")
        await wait_for(pilot, lambda: isinstance(app.screen, HelpScreen), what="help")
        await pilot.pause(0.2)
        text = screen_text(app)
        assert "Run screen" in text and "RunScreen" not in text and "EventTree" not in text
