"""``magi-tui serve``'s front door: textual-serve with a key, a guest list and a cap.

textual-serve alone accepts any WebSocket on ``/ws``: a web page the user merely visits can open
``ws://127.0.0.1:8000/ws``, type keys into the app and read every screen back (graph code, guards, paths),
and each socket starts another app process. This server keeps textual-serve's page and protocol and adds,
on every request:

* **Host** must name this server (a loopback name, the bind address, this machine's name, or a name given
  with ``--allow-host``): a DNS-rebinding page that reaches us under its own name is refused.
* **A token**, random per server start, in the page's URL (``/?token=…``) and in the WebSocket's path
  (``/ws/<token>``; the page's script appends ``?width=…`` to the URL it is given, so the token cannot be a
  query there). Only someone who was shown the printed URL has it; a page elsewhere cannot read it.
* **Origin**, sent by every browser on a WebSocket handshake, must be this server's own origin.
* **At most ``max_sessions`` apps at once**; past that a socket is refused before any process starts.

Each refusal is one log line (what was refused and why, the attacker's text shown literally), never a
traceback, and the client gets a plain 403 / 503.
"""

from __future__ import annotations

import logging
import secrets
import socket
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import urlsplit

from magi_format.text import literal

log = logging.getLogger("magi-tui.serve")

#: names under which this machine's own loopback is reached (ssh -L forwards arrive as these)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})
DEFAULT_MAX_SESSIONS = 4


def _host_of(netloc: str) -> str:
    """``host`` of a ``host[:port]`` (IPv6 in brackets), lower-cased; '' when there is none."""
    try:
        return (urlsplit("//" + netloc).hostname or "").lower()
    except ValueError:
        return ""


@dataclass
class Gate:
    """What a request must show to get in. Pure: decides from header values, so it is tested alone."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(24))
    allowed_hosts: frozenset[str] = LOOPBACK_NAMES
    max_sessions: int = DEFAULT_MAX_SESSIONS
    sessions: int = 0

    @classmethod
    def for_bind(cls, host: str, extra_hosts: list[str] | tuple[str, ...] = (), **kw: Any) -> Gate:
        """The guest list for a server bound to ``host``: loopback names always; a specific address and, for a
        wildcard bind, this machine's names too (teammates reach it by name); plus ``extra_hosts``."""
        names = set(LOOPBACK_NAMES)
        bind = host.strip("[]").lower()
        if bind in ("0.0.0.0", "::", ""):
            for name in (socket.gethostname(), socket.getfqdn()):
                if name:
                    names.add(name.lower())
        elif bind:
            names.add(bind)
        names.update(h.strip().strip("[]").lower() for h in extra_hosts if h.strip())
        return cls(allowed_hosts=frozenset(names), **kw)

    def token_ok(self, given: str | None) -> bool:
        return given is not None and secrets.compare_digest(given.encode("utf-8", "replace"),
                                                            self.token.encode())

    def host_refusal(self, host_header: str | None) -> str | None:
        """Why the Host header is refused, or None."""
        if not host_header:
            return "no Host header"
        if _host_of(host_header) not in self.allowed_hosts:
            return f"Host {literal(host_header, 100)!s} is not this server (allow it with --allow-host)"
        return None

    def origin_refusal(self, origin: str | None) -> str | None:
        """Why a WebSocket's Origin is refused, or None. A browser always sends one; a client that sends none
        is not a web page (it still needs the token)."""
        if origin is None:
            return None
        parts = urlsplit(origin) if origin != "null" else None
        if parts is None or parts.scheme not in ("http", "https") or _host_of(parts.netloc) not in self.allowed_hosts:
            return f"Origin {literal(origin, 100)!s} is not this server's page"
        return None

    def admit(self, *, path_token: str | None, host: str | None, origin: str | None) -> str | None:
        """Why a WebSocket is refused (and the session not started), or None when it may start one."""
        return (self.host_refusal(host) or self.origin_refusal(origin)
                or (None if self.token_ok(path_token) else "wrong or missing token")
                or (f"{self.sessions} session(s) already open (the cap; --max-sessions)"
                    if self.sessions >= self.max_sessions else None))


def make_server(command: str, *, host: str, port: int, title: str, public_url: str | None,
                gate: Gate) -> Any:
    """A textual-serve ``Server`` behind ``gate`` (textual-serve is imported here: the headless commands never
    load it)."""
    from aiohttp import web
    from textual_serve.server import Server

    class GatedServer(Server):
        async def _make_app(self) -> web.Application:
            import aiohttp_jinja2
            import jinja2

            app = web.Application(middlewares=[self._gate_middleware])
            aiohttp_jinja2.setup(app, loader=jinja2.FileSystemLoader(self.templates_path))
            app.add_routes([
                web.get("/", self.handle_index, name="index"),
                web.get("/ws/{token}", self.handle_websocket, name="websocket"),
                web.get("/download/{key}", self.handle_download, name="download"),
                web.static("/static", self.statics_path, show_index=False, name="static"),
            ])
            app.on_startup.append(self.on_startup)
            app.on_shutdown.append(self.on_shutdown)
            return app

        @staticmethod
        def _refuse(request: web.Request, why: str, status: type[web.HTTPException] = web.HTTPForbidden) -> None:
            peer = request.remote or "?"
            log.warning("refused %s %s from %s: %s", request.method, literal(request.path, 80), peer, why)
            raise status(text=f"magi-tui serve: refused: {why}\n")

        @web.middleware
        async def _gate_middleware(self, request: web.Request, handler: Any) -> web.StreamResponse:
            why = gate.host_refusal(request.headers.get("Host"))
            if why is None and request.path == "/" and not gate.token_ok(request.query.get("token")):
                why = "wrong or missing token: open the URL magi-tui serve printed (it ends in ?token=…)"
            if why is not None:
                self._refuse(request, why)
            return await handler(request)

        def get_websocket_url(self, request: web.Request) -> str:
            url = request.app.router["websocket"].url_for(token=gate.token)
            scheme = "wss:" if self.public_url.startswith("https") else "ws:"
            return scheme + f"{self.public_url}{url}".split(":", 1)[1]

        async def handle_index(self, request: web.Request) -> web.StreamResponse:
            import aiohttp_jinja2
            from textual_serve.server import to_int

            context = {
                "font_size": to_int(request.query.get("fontsize", "16"), 16),
                "app_websocket_url": self.get_websocket_url(request),
                "config": {"static": {"url": f"{self.public_url}/static/"}},
                "application": {"name": self.title},
            }
            response = aiohttp_jinja2.render_template("app_index.html", request, context)
            # the page holds the token: never cached, never sent on as a referrer, never framed by another page
            response.headers["Cache-Control"] = "no-store"
            response.headers["Referrer-Policy"] = "no-referrer"
            response.headers["X-Frame-Options"] = "DENY"
            return response

        async def handle_websocket(self, request: web.Request) -> web.StreamResponse:
            why = gate.admit(path_token=request.match_info.get("token"), host=request.headers.get("Host"),
                             origin=request.headers.get("Origin"))
            if why is not None:
                status = web.HTTPServiceUnavailable if why.endswith("--max-sessions)") else web.HTTPForbidden
                self._refuse(request, why, status)
            gate.sessions += 1
            log.info("session opened from %s (%d of at most %d)", request.remote or "?", gate.sessions,
                     gate.max_sessions)
            try:
                return await self._session(request)
            finally:
                gate.sessions -= 1
                log.info("session closed (%d open)", gate.sessions)

        async def _session(self, request: web.Request) -> web.WebSocketResponse:
            """textual-serve's session, which also waits for its app process to end (textual-serve leaves the
            process's transport to the garbage collector, which prints a traceback once the loop is closed)."""
            import asyncio

            from textual_serve.app_service import AppService
            from textual_serve.server import to_int

            websocket = web.WebSocketResponse(heartbeat=15)
            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            service: AppService | None = None
            try:
                await websocket.prepare(request)
                service = AppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                     close=websocket.close, download_manager=self.download_manager,
                                     debug=self.debug)
                await service.start(width, height)
                await self._process_messages(websocket, service)
            except asyncio.CancelledError:
                await websocket.close()
            except Exception as error:  # a broken session: one line in the log, the server goes on
                log.warning("session ended: %s: %s", type(error).__name__, literal(str(error), 200))
            finally:
                if service is not None:
                    await service.stop()
                    process = service._process
                    if process is not None and process.returncode is None:
                        try:
                            await asyncio.wait_for(process.wait(), 5)
                        except asyncio.TimeoutError:
                            process.kill()
                            await process.wait()
                    transport = getattr(process, "_transport", None)  # every pipe closed while the loop runs
                    if transport is not None:
                        transport.close()
                        await asyncio.sleep(0)
            return websocket

        @property
        def url(self) -> str:
            return f"{self.public_url}/?token={gate.token}"

        async def on_startup(self, app: web.Application) -> None:
            self.console.print(f"magi-tui serve: {literal(self.title, 100)}", highlight=False, markup=False)
            self.console.print(f"Open {self.url}", highlight=False, markup=False, soft_wrap=True)
            self.console.print(f"(the token is the key: at most {gate.max_sessions} session(s) at once; "
                               "Ctrl+C to stop)", highlight=False, markup=False)

    return GatedServer(command, host=host, port=port, title=title, public_url=public_url)
