"""The phone through a trusted certificate: ``secondbrain up`` with ``SB_PUBLIC_URL`` (the https address a
Caddy reverse proxy or Tailscale Serve gives it) prints the phone's sign-in link at that address with a QR
code that scans to it, ``secondbrain open --phone`` makes another, and the page signs in through the proxy's
path: plain http to loopback with the public name in ``Host`` and the public origin, as the proxy forwards
the phone's request.  Without a public address, ``open --phone`` says how to get one."""

from __future__ import annotations

from collections.abc import Iterator
from urllib.parse import urlsplit

import httpx
import pytest

from devtools.processes import run_cli
from tests.e2e.harness import Service, running_up
from tests.e2e.test_lan import qr_printed, scan

pytestmark = pytest.mark.e2e

PUBLIC = "https://brain.tail1234.ts.net"


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Service]:
    with running_up(tmp_path_factory, "sb-phone-", {"SB_PUBLIC_URL": PUBLIC}, "--no-llm") as svc:
        yield svc


def through_proxy(server: Service) -> httpx.Client:
    """What the proxy sends on: the phone's request to loopback, the public name in Host."""
    return httpx.Client(base_url=server.url, headers={"Host": urlsplit(PUBLIC).hostname or ""}, timeout=30)


def sign_in_through_proxy(server: Service, link: str) -> httpx.Response:
    token = link.split("?token=", 1)[1]
    with through_proxy(server) as proxy:
        return proxy.post("/v1/session", json={"token": token, "remember": True},
                          headers={"Origin": PUBLIC, "X-Forwarded-Proto": "https"})


def test_up_prints_the_phones_link_at_the_public_address(server: Service) -> None:
    log = server.tail(300)
    links = [ln.split("on your phone: open ", 1)[1].strip() for ln in log.splitlines() if "on your phone: open" in ln]
    assert links and links[-1].startswith(f"{PUBLIC}/?token=")
    assert scan(qr_printed(log)) == [links[-1]]  # the camera reads the same link
    signed = sign_in_through_proxy(server, links[-1])
    assert signed.status_code == 200, signed.text
    cookie = signed.headers["set-cookie"]
    assert "HttpOnly" in cookie and "Secure" in cookie and "SameSite=strict" in cookie


def test_open_phone_makes_another_link(server: Service) -> None:
    made = run_cli(["open", "--phone", "--url", server.url, "--data-dir", str(server.data_dir)], {})
    assert made.returncode == 0, made.stderr
    link = made.stdout.strip()
    assert link.startswith(f"{PUBLIC}/?token=") and "scan this code" in made.stderr
    assert scan(qr_printed(made.stderr)) == [link]
    assert sign_in_through_proxy(server, link).status_code == 200
    # The page's own writes through the proxy pass; another site's do not.
    key = (server.data_dir / "api-key").read_text().strip() if server.data_dir else ""
    with through_proxy(server) as proxy:
        auth = {"Authorization": f"Bearer {key}"}
        assert proxy.post("/v1/notes", json={"text": "Sent from the phone"},
                          headers={**auth, "Origin": PUBLIC}).status_code == 202
        assert proxy.post("/v1/notes", json={"text": "x"},
                          headers={**auth, "Origin": "https://elsewhere.example"}).status_code == 403


def test_without_a_public_address_open_phone_says_how_to_get_one(tmp_path_factory: pytest.TempPathFactory) -> None:
    with running_up(tmp_path_factory, "sb-nophone-", {}, "--no-llm") as plain:
        made = run_cli(["open", "--phone", "--url", plain.url, "--data-dir", str(plain.data_dir)], {})
    assert made.returncode == 2
    assert "set SB_PUBLIC_URL to the https address a reverse proxy or Tailscale Serve gives it" in made.stderr
    assert "secondbrain up --lan" in made.stderr
