"""``magi-tui serve``: the app in a real headless Chromium (textual-serve), read back from xterm.js's own
buffer — the run's tree is shown, and a key typed in the page reaches the app."""

from __future__ import annotations

import time

import pytest

from tests.e2e.browser import CHROMIUM, Chromium, Page, http_ok
from tests.support import slow
from tests.support.paths import COLD
from tests.support.serve import serving

pytestmark = [
    pytest.mark.skipif(CHROMIUM is None, reason="chromium is not installed (scripts/test.sh installs Debian's "
                                                "chromium; it could not here): the browser test is skipped"),
    pytest.mark.usefixtures("fixtures_dir"),
    pytest.mark.slow,
]




async def test_serve_shows_the_run_tree_in_chromium(tmp_path):
    aiohttp = pytest.importorskip("aiohttp")  # textual-serve's own dependency
    browser = None
    # the page is opened as a user opens it: from the URL serve printed, with its token
    with serving(COLD, tmp_path / "serve.log") as (url, _port):
        try:
            end = time.monotonic() + slow.limit(30)
            while not http_ok(url):
                assert time.monotonic() < end, (tmp_path / "serve.log").read_text()
                time.sleep(0.1)
            browser = Chromium(url)
            async with aiohttp.ClientSession() as session:
                async with session.ws_connect(browser.page_ws(), max_msg_size=0) as ws:
                    page = Page(ws)
                    # the same first screen as in a terminal: header, the tree with its failed lifecycles,
                    # footer (and the triage panel, once the run is loaded: the status in capitals)
                    await page.wait_for("72 events", "esc Back", "▼ fullgraph", "#0012 compiler_compile",
                                        "subgraph_0", "Status RECOVERED")
                    await page.screenshot(tmp_path / "serve.png")
                    await page.key("f")  # the first failure, selected from the browser
                    await page.wait_for("exception_type", "failed_compiler_compile")
        finally:
            if browser is not None:
                browser.close()
