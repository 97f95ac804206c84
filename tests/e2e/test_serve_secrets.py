"""``magi-tui serve`` never writes its token anywhere but the URL it prints (issue 32, item 2).

A real server on a free loopback port, its output read through a pipe (as under nohup or systemd: the URL
must be there at once): page loads, a refused socket carrying the token and a foreign page's socket leave
no token in the log. An Origin on another port than the request's is refused; an ``ssh -L`` tunnel's
(Host and Origin on the same other port) is not. Idle and slow half-open sockets are closed after the
header timeout and one client cannot hold more than its cap. ``--certfile/--keyfile`` serve HTTPS (a
self-signed certificate made here). A bind other than loopback warns that the token travels in clear text.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import os
import re
import shutil
import signal
import socket
import ssl
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from magi_tui.serve import (
    DEFAULT_HEADER_TIMEOUT,
    DEFAULT_MAX_CONNECTIONS_PER_CLIENT,
    Gate,
    TokenFilter,
    exposure_warning,
    redact_token,
    tls_context,
)
from tests.support import slow
from tests.support.net import free_port
from tests.support.paths import ROOT

aiohttp = pytest.importorskip("aiohttp")  # textual-serve's own dependency

#: a run kept in the repository: the server needs a path, no test here starts an app on it
RUN = ROOT / "tests" / "torchtrace" / "logs" / "cuda_2_11" / "runs" / "magi_depyf" / "run_20261124_205439"


@contextlib.contextmanager
def served(*args: str) -> Iterator[tuple[str, int, list[str]]]:
    """A real ``magi-tui serve RUN`` with its stdout and stderr on a pipe: yields (the URL it printed, its port,
    the lines it has written so far, still growing); stopped with everything it started."""
    port = free_port()
    server = subprocess.Popen([sys.executable, "-m", "magi_tui", "serve", str(RUN), "--port", str(port), *args],
                              cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True,
                              env={**os.environ, "COLUMNS": "400"})
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(b.decode("utf-8", "replace") for b in server.stdout),
                              daemon=True)
    reader.start()
    try:
        end = time.monotonic() + slow.limit(30)
        while not (m := re.search(r"Open (https?://\S+)", "".join(lines))):
            assert server.poll() is None and time.monotonic() < end, "".join(lines)
            time.sleep(0.05)
        yield m.group(1), port, lines
    finally:
        os.killpg(server.pid, signal.SIGTERM)
        try:
            server.wait(timeout=15)
        except subprocess.TimeoutExpired:
            os.killpg(server.pid, signal.SIGKILL)
            server.wait()
        reader.join(5)


async def _ws_status(session, url: str, ssl=True, **headers) -> int | str:
    try:
        async with session.ws_connect(url, headers=headers, ssl=ssl, timeout=aiohttp.ClientWSTimeout(ws_close=5)):
            return "open"
    except aiohttp.WSServerHandshakeError as exc:
        return exc.status


# -- pieces, without a server ------------------------------------------------------------------------------

def test_origin_compares_scheme_host_and_port():
    gate = Gate.for_bind("127.0.0.1")
    ok = dict(path_token=gate.token, host="127.0.0.1:8000", origin="http://127.0.0.1:8000")
    assert gate.admit(**ok) is None
    assert gate.admit(**{**ok, "origin": "http://localhost:8000"}) is None  # the page opened as localhost
    # a page on another local port (another app of this machine, holding the token) is another origin
    assert "another port" in gate.admit(**{**ok, "origin": "http://127.0.0.1:3000"})
    assert "another port" in gate.admit(**{**ok, "origin": "http://127.0.0.1"})  # port 80
    assert "Origin" in gate.admit(**{**ok, "origin": "https://127.0.0.1:8000"})  # not our scheme
    assert "Origin" in gate.admit(**{**ok, "origin": "http://127.0.0.1:notaport"})
    # ssh -L 9999:localhost:8000: the browser's Host and Origin both name the tunnel's port
    assert gate.admit(**{**ok, "host": "localhost:9999", "origin": "http://localhost:9999"}) is None
    # under TLS only https pages; a proxy named with --allow-host may end TLS in front of a plain server
    tls = Gate.for_bind("127.0.0.1", scheme="https")
    assert tls.admit(path_token=tls.token, host="127.0.0.1:8443", origin="https://127.0.0.1:8443") is None
    assert "Origin" in tls.admit(path_token=tls.token, host="127.0.0.1:8443", origin="http://127.0.0.1:8443")
    proxied = Gate.for_bind("127.0.0.1", ["proxy.internal"])
    assert proxied.admit(path_token=proxied.token, host="proxy.internal", origin="https://proxy.internal") is None
    assert "Origin" in proxied.admit(path_token=proxied.token, host="127.0.0.1:8000", origin="https://127.0.0.1:8000")
    assert gate.token not in repr(gate)


def test_token_taken_out_of_every_log_line():
    token = Gate().token
    assert redact_token(f'GET /?token={token}&fontsize=16 "/ws/{token}?width=80"', token) == \
        'GET /?token=[token]&fontsize=16 "/ws/[token]?width=80"'
    assert redact_token("GET /ws/guessed-token-xyz", token) == "GET /ws/[token]"
    records: list[str] = []

    class Keep(logging.Handler):
        def emit(self, record):
            records.append(self.format(record))

    handler = Keep()
    handler.addFilter(TokenFilter(token))
    logger = logging.getLogger("test-serve-secrets")
    logger.addHandler(handler)
    try:
        logger.warning("opened %s", f"/download/{token}")
        try:
            raise RuntimeError(f"bad url /?token={token}")
        except RuntimeError:
            logger.exception("failed")
    finally:
        logger.removeHandler(handler)
    text = "\n".join(records)
    assert token not in text and "/download/[token]" in text and "RuntimeError: bad url /?token=[token]" in text


def test_a_bind_beyond_loopback_warns_and_tls_options_are_checked(tmp_path):
    for host in ("127.0.0.1", "localhost", "::1", "[::1]", "127.0.0.2"):
        assert exposure_warning(host, 8000, tls=False) is None
    warning = exposure_warning("0.0.0.0", 8000, tls=False)
    assert "clear text" in warning and "ssh -L 8000:localhost:8000" in warning and "--certfile" in warning
    assert exposure_warning("192.168.1.5", 8000, tls=False) is not None
    assert exposure_warning("0.0.0.0", 8443, tls=True) is None
    assert tls_context(None, None) is None
    with pytest.raises(ValueError, match="--keyfile needs --certfile"):
        tls_context(None, "k.pem")
    with pytest.raises(ValueError, match="cannot load"):
        tls_context(str(tmp_path / "missing.pem"), None)


# -- a real server ----------------------------------------------------------------------------------------

async def test_token_never_in_the_log_and_a_foreign_port_refused():
    with served() as (url, port, lines):
        assert url.startswith(f"http://127.0.0.1:{port}/?token=")
        token = url.split("token=", 1)[1]
        base = f"http://127.0.0.1:{port}"
        async with aiohttp.ClientSession() as s:
            for _ in range(2):  # page loads
                async with s.get(url) as r:
                    assert r.status == 200 and f"/ws/{token}" in await r.text()
            async with s.get(f"{base}/download/{token}") as r:
                assert r.status == 404
            # the real token from a page on another local port: refused (no app starts)
            assert await _ws_status(s, f"ws://127.0.0.1:{port}/ws/{token}", Origin=f"http://127.0.0.1:{port + 1}") == 403
            assert await _ws_status(s, f"ws://127.0.0.1:{port}/ws/{token}", Origin="https://evil.example") == 403
            assert await _ws_status(s, f"ws://127.0.0.1:{port}/ws/{token}", Host=f"evil.example:{port}") == 403
        await asyncio.sleep(0.5)  # the access log's last lines
    log = "".join(lines)
    after_url = log.split(url, 1)[1]
    assert token not in after_url, log  # the printed URL is the one place the token is written
    assert log.count(token) == 1
    assert '"GET /?token=[token]" 200' in log and "/ws/[token]" in log and "/download/[token]" in log
    assert "another port than the one it asked" in log and "Traceback" not in log
    assert "clear text" not in log  # loopback: no warning


@pytest.mark.slow
def test_idle_and_slow_sockets_are_closed_and_capped():
    cap, timeout = DEFAULT_MAX_CONNECTIONS_PER_CLIENT, DEFAULT_HEADER_TIMEOUT
    with served() as (url, port, lines):
        socks = []
        try:
            for i in range(cap + 10):
                c = socket.create_connection(("127.0.0.1", port), timeout=5)
                if i % 2:
                    c.sendall(b"GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n")  # slowloris: headers never end
                socks.append(c)
            time.sleep(1.0)

            def closed(c: socket.socket, wait: float) -> bool:
                c.settimeout(wait)
                try:
                    return c.recv(1) == b""  # no answer: nothing was asked
                except TimeoutError:
                    return False
                except OSError:
                    return True

            first = sum(closed(c, 0.05) for c in socks)
            assert first >= 10, first  # past the cap: closed at once
            start = time.monotonic()
            for c in socks[1:cap:2]:  # the rest: closed at the header timeout, though slowloris keeps writing
                with contextlib.suppress(OSError):
                    c.sendall(b"X-a: b\r\n")
            deadline = start + timeout + 5
            assert all(closed(c, max(deadline - time.monotonic(), 0.1)) for c in socks)
            assert time.monotonic() - start < timeout + 5
        finally:
            for c in socks:
                c.close()
        with socket.create_connection(("127.0.0.1", port), timeout=5) as c:  # the server still answers
            c.sendall(f"GET {url.split(str(port), 1)[1]} HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n\r\n".encode())
            assert c.recv(12) == b"HTTP/1.1 200"
        time.sleep(0.3)
    log = "".join(lines)
    assert log.count("refused connections from 127.0.0.1") == 1, log  # one line, not one per socket
    assert "no request headers within" in log and "Traceback" not in log


def _self_signed(folder: Path) -> tuple[Path, Path]:
    cert, key = folder / "cert.pem", folder / "key.pem"
    try:
        import datetime

        from cryptography import x509
        from cryptography.hazmat.primitives import hashes, serialization
        from cryptography.hazmat.primitives.asymmetric import ec
        from cryptography.x509.oid import NameOID
    except ImportError:
        if not shutil.which("openssl"):
            pytest.skip("no way to make a certificate: neither the cryptography package nor the openssl CLI")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:prime256v1",
                        "-nodes", "-keyout", str(key), "-out", str(cert), "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        return cert, key
    pkey = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = datetime.datetime.now(datetime.timezone.utc)
    import ipaddress

    crt = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(pkey.public_key())
           .serial_number(x509.random_serial_number()).not_valid_before(now - datetime.timedelta(minutes=5))
           .not_valid_after(now + datetime.timedelta(days=1))
           .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]),
                          critical=False)
           .sign(pkey, hashes.SHA256()))
    cert.write_bytes(crt.public_bytes(serialization.Encoding.PEM))
    key.write_bytes(pkey.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                       serialization.NoEncryption()))
    return cert, key


async def test_tls_with_a_self_signed_certificate(tmp_path):
    cert, key = _self_signed(tmp_path)
    with served("--certfile", str(cert), "--keyfile", str(key)) as (url, port, lines):
        assert url.startswith(f"https://127.0.0.1:{port}/?token=")
        token = url.split("token=", 1)[1]
        trust = ssl.create_default_context(cafile=str(cert))
        async with aiohttp.ClientSession() as s:
            async with s.get(url, ssl=trust) as r:  # the handshake verifies our certificate
                page = await r.text()
                assert r.status == 200 and f"wss://127.0.0.1:{port}/ws/{token}" in page
            # the TLS page's own origin is https: an http page of the same host and port is another origin
            assert await _ws_status(s, f"wss://127.0.0.1:{port}/ws/{token}", ssl=trust,
                                    Origin=f"http://127.0.0.1:{port}") == 403
            with pytest.raises(aiohttp.ClientError):  # plain HTTP gets no page
                async with s.get(url.replace("https:", "http:")) as r:
                    await r.read()
        await asyncio.sleep(0.3)
    log = "".join(lines)
    assert log.count(token) == 1 and "Traceback" not in log and "clear text" not in log
