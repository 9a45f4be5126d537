"""Fetching a URL: redirects, robots.txt, time and size limits, content types, readable failures.

Real HTTP servers on 127.0.0.1 (threads) stand in for web sites; nothing leaves the machine.
"""

from __future__ import annotations

import gzip
import socket
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import httpx
import pytest

from secondbrain.addresses import check_host_allowed
from secondbrain.errors import PermanentError, RetryableError
from services.fetcher.fetch import Fetched, FetchPolicy, fetch

PAGE = (b"<!DOCTYPE html><html><head><meta charset='utf-8'><title>Tide tables</title></head>"
        b"<body><article><h1>Tide tables</h1><p>High water at Saint-Malo comes 42 minutes later each day."
        b"</p></article></body></html>")
HUGE_TOTAL = 200 * 1024 * 1024
CHUNK = b"<p>" + b"x" * 65530 + b"</p>"

ROBOTS = b"""# a site that keeps one area away from crawlers
User-agent: otherbot
Disallow: /page

User-agent: secondbrain
Disallow: /no-sb/
Disallow: /private/

User-agent: *
Disallow: /private/
"""


@dataclass
class Site:
    """One test web site: its base URL and what it saw."""

    base: str
    server: ThreadingHTTPServer
    hits: list[str] = field(default_factory=list)
    agents: list[str] = field(default_factory=list)
    huge_sent: int = 0
    huge_done: threading.Event = field(default_factory=threading.Event)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False  # a sleeping /slow handler must not hold up the test run
    site: Site
    robots: str

    def handle_error(self, request: Any, client_address: Any) -> None:
        pass  # clients hanging up on /huge and /slow is the point of those tests


class Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, format: str, *args: Any) -> None:
        pass

    def _send(self, status: int, body: bytes = b"", content_type: str | None = "text/html; charset=utf-8",
              headers: dict[str, str] | None = None) -> None:
        self.send_response(status)
        if content_type:
            self.send_header("Content-Type", content_type)
        self.send_header("Content-Length", str(len(body)))
        for k, v in (headers or {}).items():
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:
        site = self.server.site
        site.hits.append(self.path)
        site.agents.append(self.headers.get("User-Agent", ""))
        path = self.path
        if path == "/robots.txt":
            mode = self.server.robots
            if mode == "rules":
                self._send(200, ROBOTS, "text/plain")
            elif mode == "missing":
                self._send(404, b"not here")
            else:
                self._send(503, b"down")
        elif path in ("/page", "/private/secret", "/no-sb/x"):
            self._send(200, PAGE, headers={"ETag": '"v1-tides"', "Last-Modified": "Wed, 02 Jun 2021 10:00:00 GMT"})
        elif path.startswith("/r/"):
            n = int(path.rsplit("/", 1)[1])
            self._send(302, b"", headers={"Location": "/page" if n <= 1 else f"/r/{n - 1}"})
        elif path == "/to-private":
            self._send(301, b"", headers={"Location": f"{site.base}/private/secret"})
        elif path == "/to-ftp":
            self._send(302, b"", headers={"Location": "ftp://files.example.org/tides.txt"})
        elif path == "/slow":
            time.sleep(3)
            self._send(200, PAGE)
        elif path == "/huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.end_headers()  # no Content-Length: the size is only known by reading
            try:
                while site.huge_sent < HUGE_TOTAL:
                    self.wfile.write(CHUNK)
                    site.huge_sent += len(CHUNK)
            except OSError:
                pass
            finally:
                site.huge_done.set()
        elif path == "/declared-huge":
            self.send_response(200)
            self.send_header("Content-Type", "text/html")
            self.send_header("Content-Length", str(50 * 1024 * 1024))
            self.end_headers()
            self.wfile.write(b"<html>")  # then hang up: a client that trusts the header never waits for more
        elif path == "/bomb":
            self._send(200, gzip.compress(b"<p>" + b"a" * (5 * 1024 * 1024) + b"</p>"),
                       headers={"Content-Encoding": "gzip"})
        elif path == "/image":
            self._send(200, b"\x89PNG\r\n\x1a\n" + b"\x00" * 100, "image/png")
        elif path == "/paper.pdf":
            self._send(200, b"%PDF-1.4\n1 0 obj\n<<>>\nendobj\n%%EOF\n", "application/pdf")
        elif path == "/untyped":
            self._send(200, PAGE, None)
        elif path == "/untyped-binary":
            self._send(200, bytes(range(256)) * 8, None)
        elif path == "/unavailable":
            self._send(503, b"maintenance")
        elif path == "/forbidden":
            self._send(403, b"no")
        else:
            self._send(404, b"<h1>Not found</h1>")


def _start(robots: str) -> Site:
    server = _Server(("127.0.0.1", 0), Handler)
    server.robots = robots
    site = Site(base=f"http://127.0.0.1:{server.server_address[1]}", server=server)
    server.site = site
    threading.Thread(target=server.serve_forever, daemon=True).start()
    return site


@pytest.fixture(scope="module")
def sites() -> Iterator[dict[str, Site]]:
    started = {mode: _start(mode) for mode in ("rules", "missing", "broken")}
    yield started
    for s in started.values():
        s.server.shutdown()
        s.server.server_close()


@pytest.fixture
def site(sites: dict[str, Site]) -> Site:
    return sites["rules"]


POLICY = FetchPolicy(timeout_s=1, connect_timeout_s=1, max_bytes=1024 * 1024, allow_private=True)


def refused(url: str, policy: FetchPolicy = POLICY) -> PermanentError:
    with pytest.raises(PermanentError) as err:
        fetch(url, policy)
    return err.value


def retryable(url: str, policy: FetchPolicy = POLICY) -> RetryableError:
    with pytest.raises(RetryableError) as err:
        fetch(url, policy)
    return err.value


# --------------------------------------------------------------------------- success


def test_page_is_fetched_with_its_validators(site: Site) -> None:
    before = datetime.now(UTC)
    got = fetch(f"{site.base}/page#section-2", POLICY)
    assert isinstance(got, Fetched)
    assert got.body == PAGE
    assert got.status == 200
    assert got.url == got.requested_url == f"{site.base}/page"  # the fragment is never sent
    assert got.content_type == "text/html" and got.charset == "utf-8"
    assert got.redirects == []
    assert got.headers == {"etag": '"v1-tides"', "last-modified": "Wed, 02 Jun 2021 10:00:00 GMT"}
    assert before <= got.fetched_at <= datetime.now(UTC) and got.fetched_at.tzinfo is not None
    assert site.agents[-1] == POLICY.user_agent


def test_two_redirects_are_followed_and_recorded(site: Site) -> None:
    got = fetch(f"{site.base}/r/2", POLICY)
    assert got.body == PAGE
    assert got.requested_url == f"{site.base}/r/2"
    assert got.url == f"{site.base}/page"
    assert got.redirects == [f"{site.base}/r/2", f"{site.base}/r/1"]


def test_five_redirects_are_the_limit(site: Site) -> None:
    assert len(fetch(f"{site.base}/r/5", POLICY).redirects) == 5
    err = refused(f"{site.base}/r/6")
    assert "too many redirects" in err.reason and "/r/6" in err.reason


def test_pdf_is_accepted(site: Site) -> None:
    got = fetch(f"{site.base}/paper.pdf", POLICY)
    assert got.content_type == "application/pdf" and got.body.startswith(b"%PDF-")


def test_missing_content_type_is_sniffed(site: Site) -> None:
    assert fetch(f"{site.base}/untyped", POLICY).content_type == "text/html"
    err = refused(f"{site.base}/untyped-binary")
    assert "application/octet-stream" in err.reason


# --------------------------------------------------------------------------- robots.txt


def test_robots_disallow_is_refused(site: Site) -> None:
    hits = len(site.hits)
    err = refused(f"{site.base}/private/secret")
    assert err.reason == "robots.txt of 127.0.0.1 disallows fetching /private/secret for secondbrain"
    assert site.hits[hits:] == ["/robots.txt"]  # the page itself was never requested


def test_robots_group_for_our_agent_applies_and_others_do_not(site: Site) -> None:
    assert "/no-sb/x" in refused(f"{site.base}/no-sb/x").reason
    assert fetch(f"{site.base}/page", POLICY).body == PAGE  # disallowed for otherbot only


def test_robots_is_checked_again_after_a_redirect(site: Site) -> None:
    err = refused(f"{site.base}/to-private")
    assert "disallows fetching /private/secret" in err.reason


def test_robots_can_be_ignored_by_policy(site: Site) -> None:
    got = fetch(f"{site.base}/private/secret", FetchPolicy(timeout_s=1, respect_robots=False, allow_private=True))
    assert got.body == PAGE


def test_missing_robots_allows_everything(sites: dict[str, Site]) -> None:
    assert fetch(f"{sites['missing'].base}/private/secret", POLICY).body == PAGE


def test_unreadable_robots_means_try_later(sites: dict[str, Site]) -> None:
    site = sites["broken"]
    hits = len(site.hits)
    err = retryable(f"{site.base}/page")
    assert "robots.txt of 127.0.0.1 could not be read (HTTP 503)" in str(err)
    assert site.hits[hits:] == ["/robots.txt"]


# --------------------------------------------------------------------------- refusals and failures


def test_slow_site_times_out_quickly_as_retryable(site: Site) -> None:
    start = time.monotonic()
    err = retryable(f"{site.base}/slow")
    assert time.monotonic() - start < 2.5
    assert str(err) == f"fetching {site.base}/slow timed out: the site did not answer within 1 s"


def test_huge_body_is_refused_without_reading_it_all(site: Site) -> None:
    start = time.monotonic()
    err = refused(f"{site.base}/huge")
    assert time.monotonic() - start < 10
    assert "larger than 1 MiB" in err.reason
    assert site.huge_done.wait(10)
    assert site.huge_sent < 40 * 1024 * 1024  # far from the 200 MiB the server would have sent


def test_declared_size_is_refused_before_reading(site: Site) -> None:
    start = time.monotonic()
    err = refused(f"{site.base}/declared-huge")
    assert time.monotonic() - start < 1  # no wait for the 50 MiB that never come
    assert "larger than 1 MiB" in err.reason and "52428800 bytes" in err.reason


def test_decompressed_size_counts(site: Site) -> None:
    assert "larger than 1 MiB" in refused(f"{site.base}/bomb").reason


def test_image_is_refused(site: Site) -> None:
    assert refused(f"{site.base}/image").reason == (
        "the URL returned image/png; only web pages (HTML), text and PDF can be ingested from a URL")


def test_not_found_is_permanent(site: Site) -> None:
    assert refused(f"{site.base}/nowhere").reason == f"the page was not found (HTTP 404): {site.base}/nowhere"
    assert "HTTP 403" in refused(f"{site.base}/forbidden").reason


def test_server_error_is_retryable(site: Site) -> None:
    assert "HTTP 503" in str(retryable(f"{site.base}/unavailable"))


def test_redirect_off_the_web_is_refused(site: Site) -> None:
    err = refused(f"{site.base}/to-ftp")
    assert "only http and https URLs can be fetched" in err.reason


def test_closed_port_is_retryable() -> None:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    assert "could not connect to 127.0.0.1" in str(retryable(f"http://127.0.0.1:{port}/page"))


@pytest.mark.parametrize("url", ["ftp://example.org/file", "file:///etc/passwd", "javascript:alert(1)",
                                 "example.org/page", "mailto:someone@example.org"])
def test_only_web_urls_are_fetched(url: str) -> None:
    assert "only http and https URLs can be fetched" in refused(url).reason


def test_url_without_host_is_refused() -> None:
    assert "has no host name" in refused("http:///path").reason


def test_a_given_client_is_used_and_left_open(site: Site) -> None:
    with httpx.Client() as client:
        assert fetch(f"{site.base}/page", POLICY, client=client).body == PAGE
        assert not client.is_closed


# --------------------------------------------------------------------------- private addresses


@pytest.mark.parametrize(("host", "why"), [
    ("127.0.0.1", "loopback"), ("localhost", "loopback"), ("::1", "loopback"), ("[::1]", "loopback"),
    ("10.20.30.40", "private"), ("192.168.1.1", "private"), ("172.16.0.5", "private"),
    ("169.254.169.254", "link-local"), ("fe80::1", "link-local"), ("::ffff:127.0.0.1", "loopback"),
    ("0.0.0.0", "unspecified"), ("224.0.0.1", "not a public"),
])
def test_private_hosts_are_refused(host: str, why: str) -> None:
    with pytest.raises(PermanentError) as err:
        check_host_allowed(host)
    assert why in err.value.reason and "is not allowed" in err.value.reason


@pytest.mark.parametrize("host", ["8.8.8.8", "93.184.216.34", "2606:4700:4700::1111"])
def test_public_addresses_are_allowed(host: str) -> None:
    check_host_allowed(host)  # raises when refused


def test_policy_without_private_hosts_refuses_before_any_request(site: Site) -> None:
    hits = len(site.hits)
    err = refused(f"{site.base}/page", FetchPolicy(timeout_s=1, allow_private=False))
    assert "127.0.0.1 is a loopback address" in err.reason
    assert len(site.hits) == hits


def test_dns_rebinding_cannot_reach_a_private_address(site: Site, monkeypatch: pytest.MonkeyPatch) -> None:
    """A name that answers a public address to the first lookup and loopback to the next (DNS
    rebinding) must not reach the local site: the connection goes to the address that was checked."""
    real = socket.getaddrinfo
    port = int(site.base.rsplit(":", 1)[1])
    answers = iter(["93.184.216.34"] + ["127.0.0.1"] * 50)
    seen: list[str] = []

    def rebinding(host: Any, *args: Any, **kwargs: Any) -> Any:
        if host == "rebind.example":
            address = next(answers)
            seen.append(address)
            return [(socket.AF_INET, socket.SOCK_STREAM, 6, "", (address, port))]
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", rebinding)
    hits = len(site.hits)
    policy = FetchPolicy(timeout_s=1, connect_timeout_s=0.5, allow_private=False, respect_robots=False)
    with pytest.raises(PermanentError) as err:
        fetch(f"http://rebind.example:{port}/page", policy)
    assert len(site.hits) == hits  # the local site never saw a request
    assert seen[:2] == ["93.184.216.34", "127.0.0.1"]  # checked public, then rebound at connect time
    assert "127.0.0.1 is a loopback address" in err.value.reason


def test_the_guarded_transport_refuses_a_private_address_at_connect_time(site: Site) -> None:
    from services.fetcher.fetch import guarded_transport

    hits = len(site.hits)
    with httpx.Client(transport=guarded_transport()) as client, pytest.raises(PermanentError) as err:
        client.get(f"{site.base}/page")  # no pre-check here: only the connection step guards
    assert "loopback" in err.value.reason and len(site.hits) == hits
