"""``magi-tui serve`` cannot be driven by a web page the user merely visits (hostile round 3, item 1).

The attacker here is a real HTTP / WebSocket client (aiohttp) against a real server: without the printed
token, from another Origin, under another Host (DNS rebinding) or past the session cap, no app starts and
nothing of a screen comes back; each refusal is one log line, never a traceback. The page opened from the
printed URL still works (its WebSocket is answered by the app)."""

from __future__ import annotations

import asyncio
from urllib.parse import urlsplit

import pytest

from magi_tui.serve import Gate
from tests.support.paths import COLD
from tests.support.serve import serving

aiohttp = pytest.importorskip("aiohttp")  # textual-serve's own dependency

needs_fixtures = pytest.mark.usefixtures("fixtures_dir")


def test_gate_decides_from_headers_alone():
    gate = Gate.for_bind("127.0.0.1", max_sessions=1)
    ok = dict(path_token=gate.token, host="127.0.0.1:8000", origin="http://127.0.0.1:8000")
    assert gate.admit(**ok) is None
    # ssh -L 9999:localhost:8000: Host and Origin both on the tunnel's port (issue 32: the Origin's port must be
    # the one the request came to; a page on another local port is refused)
    assert gate.admit(**{**ok, "host": "localhost:9999", "origin": "http://localhost:9999"}) is None
    assert "Origin" in gate.admit(**{**ok, "origin": "http://localhost:9999"})
    assert "token" in gate.admit(**{**ok, "path_token": "guess"})
    assert "token" in gate.admit(**{**ok, "path_token": None})
    assert "Origin" in gate.admit(**{**ok, "origin": "https://evil.example"})
    assert "Origin" in gate.admit(**{**ok, "origin": "null"})  # a sandboxed frame or a file:// page
    assert "Host" in gate.admit(**{**ok, "host": "rebound.evil.example:8000"})
    assert "Host" in gate.admit(**{**ok, "host": None})
    gate.sessions = 1
    assert "cap" in gate.admit(**ok)
    # the attacker's text is shown literally in the refusal (no escape reaches the log's terminal)
    why = Gate.for_bind("127.0.0.1").host_refusal("\x1b]0;pwned\x07evil")
    assert "\x1b" not in why and "\x07" not in why
    # a wildcard bind lets teammates in by this machine's name; --allow-host names a proxy
    assert "proxy.internal" in Gate.for_bind("0.0.0.0", ["proxy.internal"]).allowed_hosts
    assert len(Gate().token) >= 32 and Gate().token != Gate().token


async def _status(session, url: str, **headers) -> int:
    async with session.get(url, headers=headers, allow_redirects=False) as r:
        await r.read()
        return r.status


async def _ws_status(session, url: str, **headers) -> int | str:
    try:
        async with session.ws_connect(url, headers=headers, timeout=aiohttp.ClientWSTimeout(ws_close=5)) as ws:
            # the app draws its first screen: bytes arrive only when a session really started
            msg = await asyncio.wait_for(ws.receive(), 30)
            return "open" if msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT) else str(msg.type)
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status


@needs_fixtures
@pytest.mark.slow
async def test_serve_refuses_pages_without_the_token_and_other_origins(tmp_path):
    log = tmp_path / "serve.log"
    with serving(COLD, log, "--max-sessions", "1") as (url, port):
        token = urlsplit(url).query.split("=", 1)[1]
        base = f"http://127.0.0.1:{port}"
        ws = f"ws://127.0.0.1:{port}"
        mine = {"Origin": base}
        async with aiohttp.ClientSession() as s:
            # the page: only with the token, and it tells the browser never to cache or frame it
            assert await _status(s, f"{base}/") == 403
            assert await _status(s, f"{base}/?token=nope") == 403
            async with s.get(url) as r:
                page = await r.text()
                assert r.status == 200 and r.headers["Cache-Control"] == "no-store"
                assert f"/ws/{token}" in page
            # DNS rebinding: our port under the attacker's name
            assert await _status(s, url, Host=f"rebound.evil.example:{port}") == 403
            # textual-serve's own socket is gone; a socket needs the token, our Origin and our Host
            assert await _ws_status(s, f"{ws}/ws", **mine) == 404
            assert await _ws_status(s, f"{ws}/ws/guess", **mine) == 403
            assert await _ws_status(s, f"{ws}/ws/{token}", Origin="https://evil.example") == 403
            assert await _ws_status(s, f"{ws}/ws/{token}", Origin=base, Host="evil.example") == 403
            # the real page's socket starts the app; a second one at the cap of 1 is refused while it is open
            async with s.ws_connect(f"{ws}/ws/{token}?width=80&height=24", headers=mine) as first:
                msg = await asyncio.wait_for(first.receive(), 30)
                assert msg.type in (aiohttp.WSMsgType.BINARY, aiohttp.WSMsgType.TEXT)
                assert await _ws_status(s, f"{ws}/ws/{token}", **mine) == 503
    text = log.read_text(errors="replace")
    assert "Traceback" not in text
    assert text.count("WARNING  refused") == 7, text  # each refusal once
    assert "evil.example" in text and "session(s) already open" in text
