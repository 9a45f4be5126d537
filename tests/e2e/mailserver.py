"""A real IMAP server for the mail tests: Dovecot on loopback, with its own configuration, a self-signed
certificate made here, one user in a passwd file and Maildir storage, all under one temporary folder.

Dovecot comes from the system's packages (``scripts/install.sh --dev`` installs ``dovecot-imapd``).  Run as
root, Dovecot's login processes and the mail user must not be root: they run as ``nobody`` then.
"""

from __future__ import annotations

import imaplib
import os
import pwd
import secrets
import shutil
import signal
import ssl
import subprocess
import time
from pathlib import Path

from secondbrain.infra.ports import free_port, port_accepts

USER = "reader"


def dovecot_binary() -> str:
    found = shutil.which("dovecot") or next((p for p in ("/usr/sbin/dovecot", "/usr/local/sbin/dovecot")
                                             if os.access(p, os.X_OK)), None)
    assert found, ("Dovecot is not installed: the mail tests run a real IMAP server. Run scripts/install.sh --dev "
                   "(it installs the dovecot-imapd package), or apt-get install dovecot-imapd.")
    return found


class Dovecot:
    """``start()``, ``stop()``, ``append()``; ``ca_file`` is the certificate to trust."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.binary = dovecot_binary()
        self.password = secrets.token_urlsafe(16)  # made per run: nothing secret lives in the repository
        self.imaps_port = free_port()
        self.imap_port = free_port()
        self.ca_file = root / "cert.pem"
        self.password_file = root / "password"
        self.proc: subprocess.Popen[bytes] | None = None
        self.log = root / "dovecot.log"
        self._configure()

    def _configure(self) -> None:
        root = self.root
        root.chmod(0o755)  # Dovecot's unprivileged processes read the passwd file and the mail under it
        for d in ("run", "state", "mail"):
            (root / d).mkdir(exist_ok=True)
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "2", "-subj",
                        "/CN=localhost", "-addext", "subjectAltName=IP:127.0.0.1,DNS:localhost",
                        "-keyout", str(root / "key.pem"), "-out", str(self.ca_file)],
                       check=True, capture_output=True)
        (root / "key.pem").chmod(0o600)
        if os.getuid() == 0:
            nobody = pwd.getpwnam("nobody")
            uid, gid, service_user = nobody.pw_uid, nobody.pw_gid, "nobody"
            os.chown(root / "mail", uid, gid)
        else:
            uid, gid, service_user = os.getuid(), os.getgid(), pwd.getpwuid(os.getuid()).pw_name
        (root / "passwd").write_text(f"{USER}:{{PLAIN}}{self.password}:{uid}:{gid}::{root / 'mail' / USER}::\n")
        (root / "passwd").chmod(0o644)
        self.password_file.write_text(self.password + "\n")
        self.password_file.chmod(0o600)
        (root / "dovecot.conf").write_text(f"""\
base_dir = {root / 'run'}
state_dir = {root / 'state'}
log_path = {self.log}
protocols = imap
listen = 127.0.0.1
ssl = yes
ssl_cert = <{self.ca_file}
ssl_key = <{root / 'key.pem'}
disable_plaintext_auth = yes
auth_mechanisms = plain
first_valid_uid = {min(uid, 500)}
default_internal_user = {service_user}
default_login_user = {service_user}
mail_location = maildir:{root / 'mail'}/%u
passdb {{
  driver = passwd-file
  args = scheme=PLAIN username_format=%u {root / 'passwd'}
}}
userdb {{
  driver = passwd-file
  args = username_format=%u {root / 'passwd'}
}}
service imap-login {{
  chroot =
  inet_listener imap {{
    port = {self.imap_port}
  }}
  inet_listener imaps {{
    port = {self.imaps_port}
    ssl = yes
  }}
}}
service anvil {{
  chroot =
}}
""")

    def start(self) -> Dovecot:
        # A session of its own: stopping it stops its children too (they outlive the master for a while).
        self.proc = subprocess.Popen([self.binary, "-F", "-c", str(self.root / "dovecot.conf")],
                                     stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
        deadline = time.monotonic() + 20
        while not port_accepts(self.imaps_port):
            if self.proc.poll() is not None or time.monotonic() > deadline:
                err = self.proc.stderr.read().decode() if self.proc.stderr else ""
                log = self.log.read_text() if self.log.exists() else ""
                raise AssertionError(f"dovecot did not start: {err} {log[-2000:]}")
            time.sleep(0.05)
        return self

    def stop(self) -> None:
        """Stop the server and every process it started: open connections are cut, as when a server goes down."""
        if self.proc is None:
            return
        group = self.proc.pid
        _signal_group(group, signal.SIGTERM)
        try:
            self.proc.wait(timeout=20)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        self.proc = None
        deadline = time.monotonic() + 10
        while _signal_group(group, 0) and time.monotonic() < deadline:
            time.sleep(0.05)
        _signal_group(group, signal.SIGKILL)
        while port_accepts(self.imaps_port) and time.monotonic() < deadline + 5:
            time.sleep(0.05)

    def connect(self) -> imaplib.IMAP4_SSL:
        conn = imaplib.IMAP4_SSL("127.0.0.1", self.imaps_port,
                                 ssl_context=ssl.create_default_context(cafile=str(self.ca_file)))
        conn.login(USER, self.password)
        return conn

    def append(self, folder: str, raw: bytes) -> None:
        """Deliver a message into ``folder`` (made when missing), as IMAP APPEND does for a mail program."""
        conn = self.connect()
        try:
            conn.create(f'"{folder}"')  # NO when it exists: fine
            typ, data = conn.append(f'"{folder}"', None, imaplib.Time2Internaldate(time.time()), raw)
            assert typ == "OK", data
        finally:
            conn.logout()


def _signal_group(group: int, sig: int) -> bool:
    """Send ``sig`` to the process group; whether any process was left in it."""
    try:
        os.killpg(group, sig)
    except ProcessLookupError:
        return False
    return True
