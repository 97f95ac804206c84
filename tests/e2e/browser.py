"""Headless Chromium driven over the DevTools protocol (Debian's ``chromium``; nothing is downloaded).

textual-serve draws the terminal with xterm.js on a canvas, so the text is not in the DOM: :meth:`Page.screen`
finds xterm's own buffer through ``Runtime.queryObjects`` (the page keeps its terminal in a closure) and
reads the visible rows as text, as a person would read them."""

from __future__ import annotations

import asyncio
import base64
import json
import os
import shutil
import signal
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-quic", "--no-first-run",
         "--disable-background-networking", "--disable-component-update", "--disable-sync",
         "--remote-debugging-port=0"]
#: the textual-serve page's terminal class: the one function whose prototype has these methods
_FIND_TERMINAL_CLASS = ("function(){const W=this.find(f=>f&&f.prototype&&f.prototype.sendSize&&f.prototype.onPong);"
                        "if(W)window.__magiTerminalClass=W;return !!W}")
_READ_ROWS = ("function(){const t=this[0]&&this[0].terminal;if(!t)return '';const b=t.buffer.active,o=[];"
              "for(let i=0;i<t.rows;i++){const l=b.getLine(b.viewportY+i);o.push(l?l.translateToString(true):'')}"
              "return o.join('\\n')}")


def http_ok(url: str) -> bool:
    try:
        with urllib.request.urlopen(url, timeout=1) as r:
            return r.status == 200
    except OSError:
        return False


class Chromium:
    """One headless browser on ``url``, in its own process group and profile folder."""

    def __init__(self, url: str, size: tuple[int, int] = (1200, 800)) -> None:
        self.profile = tempfile.mkdtemp(prefix="magi-chromium-")
        self.log = open(Path(self.profile) / "chromium.log", "wb")
        self.proc = subprocess.Popen([CHROMIUM, *FLAGS, f"--user-data-dir={self.profile}",
                                      f"--window-size={size[0]},{size[1]}", url],
                                     stdout=self.log, stderr=subprocess.STDOUT, start_new_session=True)

    def page_ws(self, timeout: float = 30.0) -> str:
        """The DevTools websocket of the page (Chromium writes its port to ``DevToolsActivePort``)."""
        port_file = Path(self.profile) / "DevToolsActivePort"
        end = time.monotonic() + timeout
        while time.monotonic() < end:
            try:
                port = port_file.read_text().split()[0]
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=2) as r:
                    pages = [t for t in json.loads(r.read()) if t.get("type") == "page"]
                if pages:
                    return pages[0]["webSocketDebuggerUrl"]
            except (OSError, IndexError, ValueError):
                pass
            if self.proc.poll() is not None:
                raise AssertionError(f"chromium exited {self.proc.returncode}: {self.log_text()}")
            time.sleep(0.1)
        raise AssertionError(f"no DevTools page after {timeout}s: {self.log_text()}")

    def log_text(self) -> str:
        try:
            return (Path(self.profile) / "chromium.log").read_text(errors="replace")[-2000:]
        except OSError:
            return ""

    def close(self) -> None:
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait(timeout=10)
        self.log.close()
        shutil.rmtree(self.profile, ignore_errors=True)


class DevToolsError(AssertionError):
    pass


class Page:
    """A DevTools session on one page (aiohttp's websocket client)."""

    def __init__(self, ws) -> None:
        self.ws = ws
        self._id = 0

    async def call(self, method: str, **params):
        self._id += 1
        me = self._id
        await self.ws.send_json({"id": me, "method": method, "params": params})
        while True:
            msg = await self.ws.receive_json()
            if msg.get("id") == me:
                if "error" in msg:
                    raise DevToolsError(f"{method}: {msg['error']}")
                return msg["result"]

    async def _query(self, prototype_expr: str) -> str:
        proto = (await self.call("Runtime.evaluate", expression=prototype_expr))["result"]["objectId"]
        return (await self.call("Runtime.queryObjects", prototypeObjectId=proto))["objects"]["objectId"]

    async def screen(self) -> str:
        """The terminal's visible rows as text ('' until the page's terminal exists)."""
        try:
            return await self._screen()
        except DevToolsError:  # the page is still loading: its JavaScript context changed under us
            return ""

    async def _screen(self) -> str:
        fns = await self._query("Function.prototype")
        found = await self.call("Runtime.callFunctionOn", objectId=fns, functionDeclaration=_FIND_TERMINAL_CLASS,
                                returnByValue=True)
        if not found["result"].get("value"):
            return ""
        objs = await self._query("window.__magiTerminalClass.prototype")
        rows = await self.call("Runtime.callFunctionOn", objectId=objs, functionDeclaration=_READ_ROWS,
                               returnByValue=True)
        return rows["result"].get("value") or ""

    async def wait_for(self, *texts: str, timeout: float = 30.0) -> str:
        end = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < end:
            screen = await self.screen()
            if all(t in screen for t in texts):
                return screen
            await asyncio.sleep(0.3)
        raise AssertionError(f"{texts} not in the browser's terminal; it showed:\n{screen}")

    async def key(self, ch: str) -> None:
        """Type one character into the terminal (focused first, as a click would)."""
        await self.call("Runtime.evaluate", expression="document.querySelector('.xterm-helper-textarea').focus()")
        await self.call("Input.dispatchKeyEvent", type="keyDown", key=ch, text=ch)
        await self.call("Input.dispatchKeyEvent", type="keyUp", key=ch)

    async def screenshot(self, path: Path) -> None:
        shot = await self.call("Page.captureScreenshot", format="png")
        path.write_bytes(base64.b64decode(shot["data"]))
