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
* **Origin**, sent by every browser on a WebSocket handshake, must be this server's own origin: its
  scheme (``https`` with ``--certfile``), an allowed host, and the port the request came to (the Host
  header's: a page on another local port is another origin, an ``ssh -L`` tunnel's port is this one).
* **At most ``max_sessions`` apps at once**; past that a socket is refused before any process starts.

Each refusal is one log line (what was refused and why, the attacker's text shown literally), never a
traceback, and the client gets a plain 403 / 503.

The token is written nowhere but the printed URL (issue 32): the access log, the refusals and every other
log line go through :func:`redact_token` (``/?token=[token]``, ``/ws/[token]``); exceptions are logged as
text, without a traceback's local variables. A connection gets ``header_timeout`` seconds to send a request's
headers (and to finish a TLS handshake), a client (one address) at most ``max_connections_per_client``
connections at once: idle half-open sockets cannot pile up. A bind other than loopback without TLS prints
:func:`exposure_warning`; ``--certfile``/``--keyfile`` serve HTTPS and WSS (:func:`tls_context`).
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import secrets
import signal
import socket
import ssl
import sys
import time
from dataclasses import dataclass, field
from typing import Any, NoReturn
from urllib.parse import urlsplit

from magi_format.text import literal

log = logging.getLogger("magi-tui.serve")

#: names under which this machine's own loopback is reached (ssh -L forwards arrive as these)
LOOPBACK_NAMES = frozenset({"localhost", "127.0.0.1", "::1", "ip6-localhost"})
DEFAULT_MAX_SESSIONS = 4
#: seconds a connection has to send its request's headers (or finish its TLS handshake)
DEFAULT_HEADER_TIMEOUT = 10.0
#: connections one client address may hold at once (a browser uses about 6, plus one per session)
DEFAULT_MAX_CONNECTIONS_PER_CLIENT = 32
TOKEN_MARK = "[token]"
_TOKEN_IN_TEXT = re.compile(r"(/ws/|[?&]token=)[^\s\"'&#?/]*")


def redact_token(text: str, token: str | None = None) -> str:
    """``text`` with any token taken out: a ``/ws/<token>`` path's, a ``token=`` query's, and ``token``
    itself wherever it is."""
    if token:
        text = text.replace(token, TOKEN_MARK)
    return _TOKEN_IN_TEXT.sub(lambda m: m.group(1) + TOKEN_MARK, text)


class TokenFilter(logging.Filter):
    """Put on a handler: every record it writes has the token taken out (:func:`redact_token`), an exception
    included (as plain text: a rich traceback would show local variables, the token among them)."""

    def __init__(self, token: str) -> None:
        super().__init__()
        self.token = token

    def filter(self, record: logging.LogRecord) -> bool:
        text = record.getMessage()
        if record.exc_info:
            import traceback

            text += "\n" + "".join(traceback.format_exception(*record.exc_info)).rstrip()
        elif record.exc_text:
            text += "\n" + record.exc_text
        record.msg, record.args = redact_token(text, self.token), None
        record.exc_info, record.exc_text = None, None
        return True


def is_loopback(host: str) -> bool:
    """Whether binding to ``host`` reaches this machine only."""
    bare = host.strip("[]").lower()
    if bare in LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(bare).is_loopback
    except ValueError:
        return False


def exposure_warning(host: str, port: int, tls: bool) -> str | None:
    """The warning a server bound to ``host`` prints, or None (loopback, or TLS)."""
    if is_loopback(host) or tls:
        return None
    return (f"magi-tui serve: warning: listening on {literal(host, 100)} without TLS: the URL's token travels in "
            "clear text and anyone on the network path can read it and drive the app. Keep the default "
            f"--host 127.0.0.1 and reach it through an SSH tunnel (ssh -L {port}:localhost:{port} HOST), "
            "or serve HTTPS with --certfile/--keyfile.")


def tls_context(certfile: str | None, keyfile: str | None) -> ssl.SSLContext | None:
    """The server's TLS context from a PEM certificate (and its key, unless the certificate file holds it),
    or None without ``certfile``; :class:`ValueError` in words when they cannot be used."""
    if not certfile:
        if keyfile:
            raise ValueError("--keyfile needs --certfile")
        return None
    ctx = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    try:
        ctx.load_cert_chain(certfile, keyfile or None)
    except (OSError, ssl.SSLError) as exc:
        raise ValueError(f"--certfile/--keyfile: cannot load {certfile}"
                         + (f" / {keyfile}" if keyfile else "") + f": {exc}") from None
    return ctx


def _host_of(netloc: str) -> str:
    """``host`` of a ``host[:port]`` (IPv6 in brackets), lower-cased; '' when there is none."""
    try:
        return (urlsplit("//" + netloc).hostname or "").lower()
    except ValueError:
        return ""


@dataclass
class Gate:
    """What a request must show to get in. Pure: decides from header values, so it is tested alone."""

    token: str = field(default_factory=lambda: secrets.token_urlsafe(24), repr=False)
    allowed_hosts: frozenset[str] = LOOPBACK_NAMES
    max_sessions: int = DEFAULT_MAX_SESSIONS
    sessions: int = 0
    #: this server's scheme (``https`` when it serves TLS)
    scheme: str = "http"
    #: names given with --allow-host: a proxy in front may end TLS, so its pages may also be ``https``
    proxy_hosts: frozenset[str] = frozenset()

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
        extra = frozenset(h.strip().strip("[]").lower() for h in extra_hosts if h.strip())
        return cls(allowed_hosts=frozenset(names | extra), proxy_hosts=extra, **kw)

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

    def origin_refusal(self, origin: str | None, host: str | None = None) -> str | None:
        """Why a WebSocket's Origin is refused, or None. A browser always sends one; a client that sends none
        is not a web page (it still needs the token). Scheme, host and port are compared: the scheme must be
        this server's (or ``https`` under an --allow-host name), the host an allowed one, the port the one
        the request came to (``host``, the Host header: default ports by scheme)."""
        if origin is None:
            return None
        refused = f"Origin {literal(origin, 100)!s} is not this server's page"
        try:
            parts = urlsplit(origin) if origin != "null" else None
            origin_port = parts.port if parts is not None else None
            host_port = urlsplit("//" + host).port if host else None
        except ValueError:
            return refused
        if parts is None:
            return refused
        origin_host = _host_of(parts.netloc)
        schemes = {self.scheme} | ({"https"} if origin_host in self.proxy_hosts else set())
        if parts.scheme not in schemes or origin_host not in self.allowed_hosts:
            return refused
        if host is not None:
            default = 443 if parts.scheme == "https" else 80
            if (origin_port or default) != (host_port or default):
                return f"{refused} (another port than the one it asked: {literal(host, 100)!s})"
        return None

    def admit(self, *, path_token: str | None, host: str | None, origin: str | None) -> str | None:
        """Why a WebSocket is refused (and the session not started), or None when it may start one."""
        return (self.host_refusal(host) or self.origin_refusal(origin, host)
                or (None if self.token_ok(path_token) else "wrong or missing token")
                or (f"{self.sessions} session(s) already open (the cap; --max-sessions)"
                    if self.sessions >= self.max_sessions else None))


class ConnectionGuard:
    """Per-connection limits on an aiohttp ``web.Server`` (what a runner's ``server`` is): at most
    ``per_client`` connections from one address (the rest closed at once), and ``header_timeout`` seconds
    for a connection to send its first request's headers (aiohttp's keep-alive timeout, set to the same,
    covers the later ones). One log line per client and kind in ``quiet`` seconds, however many sockets."""

    def __init__(self, per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
                 header_timeout: float = DEFAULT_HEADER_TIMEOUT, quiet: float = 10.0) -> None:
        self.per_client = per_client
        self.header_timeout = header_timeout
        self.quiet = quiet
        self.open: dict[str, int] = {}
        self._peer: dict[Any, str] = {}
        self._started: set[Any] = set()
        self._logged: dict[tuple[str, str], float] = {}

    def _log(self, peer: str, kind: str, message: str, *args: Any) -> None:
        now = time.monotonic()
        if now - self._logged.get((peer, kind), -1e9) >= self.quiet:
            self._logged[(peer, kind)] = now
            log.warning(message, *args)

    def install(self, server: Any) -> None:
        made, lost, factory = server.connection_made, server.connection_lost, server.request_factory
        loop = asyncio.get_running_loop()

        def connection_made(handler: Any, transport: Any) -> None:
            made(handler, transport)
            peername = transport.get_extra_info("peername")
            peer = str(peername[0]) if isinstance(peername, tuple) and peername else "?"
            self._peer[handler] = peer
            self.open[peer] = self.open.get(peer, 0) + 1
            if self.open[peer] > self.per_client:
                self._log(peer, "cap", "refused connections from %s: %d open (at most %d per client)", peer,
                          self.open[peer] - 1, self.per_client)
                loop.call_soon(handler.force_close)  # once its task has started (it asserts a live connection)
                return
            loop.call_later(self.header_timeout, self._deadline, handler)

        def connection_lost(handler: Any, exc: BaseException | None = None) -> None:
            lost(handler, exc)
            self._started.discard(handler)
            peer = self._peer.pop(handler, None)
            if peer is not None:
                self.open[peer] -= 1
                if not self.open[peer]:
                    del self.open[peer]

        def request_factory(message: Any, payload: Any, protocol: Any, writer: Any, task: Any) -> Any:
            self._started.add(protocol)  # its headers are in
            return factory(message, payload, protocol, writer, task)

        server.connection_made = connection_made
        server.connection_lost = connection_lost
        server.request_factory = request_factory

    def _deadline(self, handler: Any) -> None:
        if handler in self._peer and handler not in self._started and handler.transport is not None:
            peer = self._peer[handler]
            self._log(peer, "slow", "closed connections from %s: no request headers within %gs", peer,
                      self.header_timeout)
            handler.force_close()


def make_server(command: str, *, host: str, port: int, title: str, public_url: str | None, gate: Gate,
                ssl_context: ssl.SSLContext | None = None, header_timeout: float = DEFAULT_HEADER_TIMEOUT,
                max_connections_per_client: int = DEFAULT_MAX_CONNECTIONS_PER_CLIENT) -> Any:
    """A textual-serve ``Server`` behind ``gate`` (textual-serve is imported here: the headless commands never
    load it); with ``ssl_context``, HTTPS and WSS."""
    from aiohttp import web
    from aiohttp.abc import AbstractAccessLogger
    from textual_serve.server import Server

    if ssl_context is not None:
        gate.scheme = "https"
        if public_url is None:
            public_url = f"https://{f'[{host}]' if ':' in host else host}:{port}"
        elif public_url.startswith("http://"):
            public_url = "https://" + public_url[len("http://"):]

    class AccessLog(AbstractAccessLogger):
        """One line a request: who, what (the token taken out), the status, the seconds."""

        def log(self, request: web.BaseRequest, response: web.StreamResponse, time: float) -> None:
            self.logger.info('%s "%s %s" %s %.3fs', request.remote or "?", request.method,
                             literal(redact_token(request.path_qs, gate.token), 200), response.status, time)

    class GatedServer(Server):
        def initialize_logging(self) -> None:
            super().initialize_logging()
            for handler in logging.getLogger().handlers:
                handler.addFilter(TokenFilter(gate.token))
                if hasattr(handler, "tracebacks_show_locals"):
                    handler.tracebacks_show_locals = False

        def serve(self, debug: bool = False) -> None:
            """textual-serve's ``serve``, run by hand: the access log, the timeouts, the connection cap and TLS
            are ours; the URL is printed (and flushed) once the socket listens."""
            self.debug = debug
            self.initialize_logging()
            asyncio.run(self._serve())

        async def _serve(self) -> None:
            loop = asyncio.get_running_loop()
            stop = asyncio.Event()
            for sig in (signal.SIGINT, signal.SIGTERM):
                try:
                    loop.add_signal_handler(sig, stop.set)
                except (NotImplementedError, RuntimeError):  # no signal handlers on this loop (not the main
                    pass                                       # thread, or Windows): Ctrl-C ends the process as usual
            runner = web.AppRunner(await self._make_app(), handle_signals=False, access_log_class=AccessLog,
                                   keepalive_timeout=header_timeout)
            await runner.setup()
            server = runner.server
            assert server is not None, "made by setup()"
            listening = None
            try:
                ConnectionGuard(max_connections_per_client, header_timeout).install(server)
                try:
                    listening = await loop.create_server(
                        server, self.host, self.port, ssl=ssl_context, backlog=128,
                        ssl_handshake_timeout=header_timeout if ssl_context is not None else None)
                except OSError as exc:  # the port is taken, the address is not this machine's: one line, exit 1
                    print(f"magi-tui: cannot listen on {literal(self.host, 100)}:{self.port}: "
                          f"{literal(exc.strerror or exc)}", file=sys.stderr, flush=True)
                    raise SystemExit(1) from None
                self._announce()
                await stop.wait()
            finally:
                if listening is not None:
                    listening.close()
                await runner.cleanup()

        def _announce(self) -> None:
            self.console.print(f"magi-tui serve: {literal(self.title, 100)}", highlight=False, markup=False)
            self.console.print(f"Open {self.url}", highlight=False, markup=False, soft_wrap=True)
            self.console.print(f"(the token is the key: at most {gate.max_sessions} session(s) at once; "
                               "Ctrl+C to stop)", highlight=False, markup=False)
            warning = exposure_warning(self.host, self.port, ssl_context is not None)
            if warning:
                print(warning, file=sys.stderr, flush=True)
            sys.stdout.flush()  # under nohup / systemd / a pipe the URL is there at once

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
        def _refuse(request: web.Request, why: str, status: type[web.HTTPException] = web.HTTPForbidden) -> NoReturn:
            peer = request.remote or "?"
            log.warning("refused %s %s from %s: %s", request.method,
                        literal(redact_token(request.path, gate.token), 80), peer, why)
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

        async def handle_websocket(self, request: web.Request) -> web.WebSocketResponse:
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

            async def close() -> None:  # AppService awaits a close that answers nothing
                await websocket.close()

            width = to_int(request.query.get("width", "80"), 80)
            height = to_int(request.query.get("height", "24"), 24)
            service: AppService | None = None
            try:
                await websocket.prepare(request)
                service = AppService(self.command, write_bytes=websocket.send_bytes, write_str=websocket.send_str,
                                     close=close, download_manager=self.download_manager,
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
            """Nothing: the URL is printed once the socket listens (:meth:`_announce`)."""

    return GatedServer(command, host=host, port=port, title=title, public_url=public_url)
