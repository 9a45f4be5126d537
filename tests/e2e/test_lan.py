"""``secondbrain up --lan``, as a person with a phone uses it: HTTPS on the local network address with the
certificate kept in the data directory, its fingerprint and a QR code of the phone's sign-in link printed, the
link signing in over HTTPS, other names and other sites refused, and the same certificate at the next start."""

from __future__ import annotations

import re
import socket
import ssl
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pytest
import zxingcpp
from cryptography import x509
from cryptography.hazmat.primitives import hashes

from tests.e2e.harness import Service, readable_tmp, run_cli

pytestmark = pytest.mark.e2e

ATTACKER = "http://attacker.example"
# What qrcode's text output draws for (top module dark, bottom module dark); NBSP is neither.
HALF_BLOCKS = {"\xa0": (0, 0), "▀": (1, 0), "▄": (0, 1), "█": (1, 1)}


def lan_address() -> str:
    """An address of this machine other than the loopback one plain http listens on."""
    for candidate in ("127.0.0.2",):
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
            try:
                sock.bind((candidate, 0))
                return candidate
            except OSError:
                pass
    from secondbrain.infra.lan import detect_address

    found = detect_address()
    if found is None:
        pytest.skip("this machine has no second address to serve --lan on", allow_module_level=True)
    return found


ADDRESS = lan_address()


def printed(svc: Service, timeout: float = 30.0) -> str:
    """The log once the LAN part of the start-up message is in it."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        text = svc.log_path.read_text(errors="replace")
        if "certificate fingerprint (SHA-256):" in text:
            return text
        time.sleep(0.2)
    raise AssertionError(f"no LAN lines printed:\n{svc.tail()}")


def fingerprint_printed(log: str) -> str:
    return re.findall(r"certificate fingerprint \(SHA-256\): ([0-9A-F:]+)", log)[-1]


def link_printed(log: str) -> str:
    return re.findall(r"on your phone \(same network\): open (https://\S+)", log)[-1]


def qr_printed(log: str) -> list[str]:
    """The lines of the last QR code printed (they come right after "scan this code")."""
    lines = log.splitlines()
    start = max(i for i, line in enumerate(lines) if "scan this code" in line) + 1
    qr = []
    for line in lines[start:]:
        if not line or set(line) - set(HALF_BLOCKS):
            break
        qr.append(line)
    return qr


def scan(qr: list[str]) -> list[str]:
    """What a camera reads from the printed code: each character is two modules, one above the other."""
    modules = np.zeros((2 * len(qr), max(map(len, qr))), dtype=np.uint8)
    for r, line in enumerate(qr):
        for c, ch in enumerate(line):
            top, bottom = HALF_BLOCKS[ch]
            modules[2 * r, c], modules[2 * r + 1, c] = top, bottom
    pixels = np.kron(255 * (1 - modules), np.ones((8, 8), dtype=np.uint8)).astype(np.uint8)
    pixels = np.pad(pixels, 32, constant_values=255)  # white paper around it
    return [b.text for b in zxingcpp.read_barcodes(pixels)]


def trusting(cert_file: Path) -> ssl.SSLContext:
    """A TLS context that trusts exactly this certificate (what the phone does once told to), nothing else."""
    ctx = ssl.create_default_context(cafile=str(cert_file))
    assert ctx.get_ca_certs() and len(ctx.get_ca_certs()) == 1
    return ctx


def start(root: Path, name: str, logs: Path) -> Service:
    svc = Service(name, ["up", "--data-dir", str(root / "data"), "--no-llm", "--lan", "--lan-address", ADDRESS],
                  {}, logs)
    svc.start().wait_ready(timeout=180)
    return svc


@pytest.fixture(scope="module")
def root() -> Iterator[Path]:
    with readable_tmp("sb-lan-") as path:
        yield path


@pytest.fixture(scope="module")
def server(root: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    svc = start(root, "up-lan", tmp_path_factory.mktemp("lan-logs"))
    try:
        yield svc
    finally:
        svc.stop()


def cert_of(root: Path) -> x509.Certificate:
    return x509.load_pem_x509_certificate((root / "data" / "lan-cert.pem").read_bytes())


def test_the_fingerprint_printed_is_the_certificate_s_and_it_names_the_address(server: Service, root: Path) -> None:
    log = printed(server)
    cert = cert_of(root)
    assert fingerprint_printed(log) == cert.fingerprint(hashes.SHA256()).hex(":").upper()
    names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(ip) for ip in names.get_values_for_type(x509.IPAddress)] == [ADDRESS]
    key = root / "data" / "lan-key.pem"
    assert key.stat().st_mode & 0o077 == 0  # the private key is the owner's only
    # The phone sees the same certificate on the wire.
    pem = ssl.get_server_certificate((ADDRESS, server.port))
    assert x509.load_pem_x509_certificate(pem.encode()).fingerprint(hashes.SHA256()) == \
        cert.fingerprint(hashes.SHA256())


def test_the_qr_code_scans_to_the_phone_s_sign_in_link(server: Service) -> None:
    log = printed(server)
    link = link_printed(log)
    assert link.startswith(f"https://{ADDRESS}:{server.port}/?token=")
    assert scan(qr_printed(log)) == [link]


def test_the_link_signs_the_phone_in_over_https(server: Service, root: Path) -> None:
    link = link_printed(printed(server))
    base = f"https://{ADDRESS}:{server.port}"
    with httpx.Client(base_url=base, verify=trusting(root / "data" / "lan-cert.pem"), timeout=30) as phone:
        page = phone.get(link.removeprefix(base))
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        assert phone.get("/v1/me").status_code == 401  # not signed in yet
        # What the page's script does with the token: posts it from its own origin.
        signed = phone.post("/v1/session", json={"token": link.split("token=")[1]}, headers={"Origin": base})
        assert signed.status_code == 200, signed.text
        cookie = signed.headers["set-cookie"].lower()
        assert "secure" in cookie and "httponly" in cookie and "samesite=strict" in cookie
        me = phone.get("/v1/me")
        assert me.status_code == 200 and me.json()["user_id"] == "local"
        # The link worked once.
        again = phone.post("/v1/session", json={"token": link.split("token=")[1]}, headers={"Origin": base})
        assert again.status_code == 401
    # Plain http on loopback is as it was.
    with server.client() as local:
        assert local.get("/v1/me").status_code == 200


def test_other_names_and_other_sites_are_refused(server: Service, root: Path) -> None:
    base = f"https://{ADDRESS}:{server.port}"
    ctx = trusting(root / "data" / "lan-cert.pem")
    with server.client() as local:
        token = local.post("/v1/login-links").json()["token"]
    with httpx.Client(base_url=base, verify=ctx, timeout=30) as phone:
        for host in ("attacker.example", f"127.0.0.1:{server.port}", f"{ADDRESS}:1", "10.0.0.9", ADDRESS):
            r = phone.get("/", headers={"Host": host})
            assert r.status_code == 421, (host, r.status_code)
            assert f"answers only to {ADDRESS}:{server.port}" in r.json()["detail"]
        # A page on another site posting to the phone's address: refused before the token is looked at.
        cross = phone.post("/v1/session", json={"token": token}, headers={"Origin": ATTACKER})
        assert cross.status_code == 403 and "cross-site request refused" in cross.json()["detail"]
        # Nor does the loopback origin count as this one.
        loop = phone.post("/v1/session", json={"token": token}, headers={"Origin": f"http://127.0.0.1:{server.port}"})
        assert loop.status_code == 403
        # The token was not spent by those refusals.
        ok = phone.post("/v1/session", json={"token": token}, headers={"Origin": base})
        assert ok.status_code == 200
    # The LAN port speaks TLS only: no plain http there.
    with pytest.raises(httpx.HTTPError):
        httpx.get(f"http://{ADDRESS}:{server.port}/healthz", timeout=5)
    # A client that does not trust the certificate does not get in (what the phone warns about).
    with pytest.raises(httpx.ConnectError):
        httpx.get(f"{base}/healthz", timeout=5)


def test_a_second_start_serves_the_same_certificate(server: Service, root: Path,
                                                     tmp_path_factory: pytest.TempPathFactory) -> None:
    first = fingerprint_printed(printed(server))
    cert_bytes = (root / "data" / "lan-cert.pem").read_bytes()
    assert server.stop() == 0
    again = start(root, "up-lan-again", tmp_path_factory.mktemp("lan-logs-2"))
    try:
        log = printed(again)
        assert fingerprint_printed(log) == first
        assert "made a new certificate" not in log
        assert (root / "data" / "lan-cert.pem").read_bytes() == cert_bytes
        with httpx.Client(verify=trusting(root / "data" / "lan-cert.pem"), timeout=30) as phone:
            assert phone.get(f"https://{ADDRESS}:{again.port}/healthz").status_code == 200
        assert scan(qr_printed(log)) == [link_printed(log)]
    finally:
        again.stop()


def test_no_such_address_or_no_keys_is_refused_with_a_sentence(root: Path) -> None:
    done = run_cli(["up", "--data-dir", str(root / "other"), "--no-llm", "--lan-address", "203.0.113.77"], {},
                   timeout=60)
    assert done.returncode == 2
    assert "refusing to start with --lan: --lan-address 203.0.113.77 is not an address of this machine" in done.stderr
    keyless = run_cli(["up", "--data-dir", str(root / "other"), "--no-llm", "--lan-address", ADDRESS],
                      {"SB_AUTH": "off"}, timeout=60)
    assert keyless.returncode == 2 and "refusing --lan with SB_AUTH=off" in keyless.stderr
