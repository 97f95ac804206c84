"""The real app over real SSH: a private ``sshd`` on loopback (throwaway host key, user key and config in a
temp dir, a free port, run as the current user; no system config touched), ``ssh -tt 127.0.0.1 magi-tui
--ansi RUN`` in tmux at 80×24, driven with ``f``, ``d``, ``q`` at two TERMs."""

from __future__ import annotations

import getpass
import os
import shutil
import signal
import socket
import subprocess
import time

import pytest

from tests.e2e.tmux import MAGI, Tmux
from tests.support import slow
from tests.support.net import free_port
from tests.support.paths import COLD

SSHD = "/usr/sbin/sshd"
pytestmark = [
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
    pytest.mark.skipif(not (os.access(SSHD, os.X_OK) and shutil.which("ssh") and shutil.which("ssh-keygen")),
                       reason="openssh-server is not installed (scripts/test.sh installs it; it could not here)"),
    pytest.mark.usefixtures("fixtures_dir"),
    pytest.mark.slow,
]




@pytest.fixture(scope="module")
def sshd(tmp_path_factory):
    d = tmp_path_factory.mktemp("sshd")
    for name in ("host_key", "id"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(d / name)], check=True)
    (d / "authorized_keys").write_text((d / "id.pub").read_text())
    os.chmod(d / "authorized_keys", 0o600)
    port = free_port()
    (d / "sshd_config").write_text(f"""\
Port {port}
ListenAddress 127.0.0.1
HostKey {d / "host_key"}
PidFile {d / "sshd.pid"}
AuthorizedKeysFile {d / "authorized_keys"}
PubkeyAuthentication yes
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
UsePAM no
StrictModes no
PrintMotd no
PrintLastLog no
""")
    if os.geteuid() == 0 and not os.path.isdir("/run/sshd"):
        os.makedirs("/run/sshd", mode=0o755)  # sshd's empty privilege-separation dir (the package's runtime dir)
    log = open(d / "sshd.log", "wb")
    proc = subprocess.Popen([SSHD, "-D", "-e", "-f", str(d / "sshd_config")], stdout=log, stderr=subprocess.STDOUT,
                            start_new_session=True)
    end = time.monotonic() + slow.limit(15)
    while True:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=1).close()
            break
        except OSError:
            assert proc.poll() is None and time.monotonic() < end, (d / "sshd.log").read_text()
            time.sleep(0.1)
    ssh = (f"ssh -tt -F /dev/null -p {port} -i {d / 'id'} -o IdentitiesOnly=yes -o BatchMode=yes "
           f"-o StrictHostKeyChecking=no -o UserKnownHostsFile={d / 'known_hosts'} -o LogLevel=ERROR "
           f"{getpass.getuser()}@127.0.0.1")
    yield ssh
    os.killpg(proc.pid, signal.SIGTERM)
    proc.wait(timeout=10)
    log.close()


@pytest.mark.parametrize("term", ["xterm-256color", "screen"])
def test_f_d_q_over_ssh_at_80x24(sshd, term):
    t = Tmux(80, 24, f"TERM={term} {sshd} {MAGI} --ansi {COLD}; echo ssh exited $?; sleep 30")
    try:
        t.wait_for("esc Back", timeout=30)  # ssh login + app start
        screen = t.wait_for("RECOVERED")
        assert "72 events" in screen
        # --ansi: only the terminal's own palette reaches it, never 256-colour or 24-bit codes
        styled = subprocess.run(["tmux", "-L", t.sock, "capture-pane", "-p", "-e"], capture_output=True,
                                text=True).stdout
        assert "\x1b[" in styled and "38;5;" not in styled and "38;2;" not in styled and "48;2;" not in styled
        t.keys("f")
        screen = t.wait_for("failed_compiler_compile")
        assert "TensorifyScalarRestartAnalysis" in screen
        t.keys("d")
        screen = t.wait_for("identical")  # a RestartAnalysis fails before the graph changes
        assert " diff " in screen and "before_compiler_compile_graph" in screen
        t.keys("q")
        t.wait_for("esc Back")
        t.keys("q")
        t.wait_for("ssh exited 0", timeout=15)  # the app quit cleanly, and with it the ssh session
        assert "esc Back" not in t.screen()
    finally:
        t.kill()
