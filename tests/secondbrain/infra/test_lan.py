"""``up --lan``'s certificate and address: made once and kept, made again only when it no longer fits the
address or is about to expire, fit for a phone to trust; a bad address refused with a sentence."""

from __future__ import annotations

import asyncio
import datetime as dt
import ssl
from pathlib import Path
from typing import Any

import pytest
from cryptography import x509
from cryptography.x509.oid import ExtendedKeyUsageOID

from secondbrain.infra.lan import LanError, choose_address, ensure_certificate

pytestmark = pytest.mark.fast

NOW = dt.datetime(2026, 11, 26, 8, 0, tzinfo=dt.UTC)


def test_the_certificate_is_made_once_then_kept(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path, "192.168.1.20", "kitchen-laptop", now=NOW)
    assert first.made and first.why == ""
    assert (tmp_path / "lan-key.pem").stat().st_mode & 0o077 == 0
    again = ensure_certificate(tmp_path, "192.168.1.20", "kitchen-laptop", now=NOW + dt.timedelta(days=100))
    assert not again.made and again.fingerprint == first.fingerprint
    # Python's own TLS stack loads the pair, as uvicorn will.
    ssl.create_default_context(ssl.Purpose.CLIENT_AUTH).load_cert_chain(again.cert_file, again.key_file)


def test_what_a_phone_needs_is_in_it(tmp_path: Path) -> None:
    made = ensure_certificate(tmp_path, "192.168.1.20", "kitchen-laptop", now=NOW)
    cert = x509.load_pem_x509_certificate(made.cert_file.read_bytes())
    sans = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    assert [str(a) for a in sans.get_values_for_type(x509.IPAddress)] == ["192.168.1.20"]
    assert sans.get_values_for_type(x509.DNSName) == ["kitchen-laptop"]
    assert cert.extensions.get_extension_for_class(x509.BasicConstraints).value.ca  # installable as trusted
    assert ExtendedKeyUsageOID.SERVER_AUTH in cert.extensions.get_extension_for_class(x509.ExtendedKeyUsage).value
    assert cert.not_valid_after_utc - cert.not_valid_before_utc <= dt.timedelta(days=825 + 1)  # Apple's limit
    assert made.fingerprint.count(":") == 31 and made.fingerprint == made.fingerprint.upper()
    # A host name a certificate cannot carry is left out, the address is enough.
    (tmp_path / "other").mkdir()
    other = ensure_certificate(tmp_path / "other", "10.0.0.5", "my_host", now=NOW)
    cert2 = x509.load_pem_x509_certificate(other.cert_file.read_bytes())
    assert cert2.extensions.get_extension_for_class(x509.SubjectAlternativeName).value.get_values_for_type(
        x509.DNSName) == []


def test_a_new_address_or_the_end_near_makes_a_new_one_and_says_why(tmp_path: Path) -> None:
    first = ensure_certificate(tmp_path, "192.168.1.20", "h", now=NOW)
    moved = ensure_certificate(tmp_path, "192.168.1.77", "h", now=NOW)
    assert moved.made and moved.fingerprint != first.fingerprint and "192.168.1.20" in moved.why
    late = ensure_certificate(tmp_path, "192.168.1.77", "h", now=NOW + dt.timedelta(days=810))
    assert late.made and "expires" in late.why
    (tmp_path / "lan-key.pem").write_text("not a key")
    damaged = ensure_certificate(tmp_path, "192.168.1.77", "h", now=NOW)
    assert damaged.made and "could not be read" in damaged.why


def test_a_bad_address_is_refused_with_a_sentence() -> None:
    assert choose_address("127.0.0.2") == "127.0.0.2"
    for bad, words in (("phone.local", "is not an IPv4 address"), ("0.0.0.0", "not one machine's address"),
                       ("203.0.113.77", "is not an address of this machine")):
        with pytest.raises(LanError, match=words):
            choose_address(bad)


def test_the_lan_listener_answers_to_its_own_address_and_port_only() -> None:
    from secondbrain.http_security import OnlyAuthority

    async def app(scope: dict[str, object], receive: object, send: Any) -> None:
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})

    def status(guard: OnlyAuthority, host: str) -> int:
        sent: list[dict[str, Any]] = []

        async def send(message: dict[str, Any]) -> None:
            sent.append(message)

        asyncio.run(guard({"type": "http", "headers": [(b"host", host.encode())]}, None, send))  # type: ignore[arg-type]
        return int(sent[0]["status"])

    on_8000 = OnlyAuthority(app, "192.168.1.20", 8000)  # type: ignore[arg-type]
    assert status(on_8000, "192.168.1.20:8000") == 200
    for other in ("192.168.1.20", "192.168.1.20:8001", "192.168.1.21:8000", "localhost:8000", "evil.example"):
        assert status(on_8000, other) == 421, other
    on_443 = OnlyAuthority(app, "192.168.1.20", 443)  # type: ignore[arg-type]
    assert status(on_443, "192.168.1.20") == 200  # browsers leave the default port out


def test_no_address_found_is_a_sentence_that_says_what_to_do(monkeypatch: pytest.MonkeyPatch) -> None:
    import secondbrain.infra.lan as lan

    monkeypatch.setattr(lan, "detect_address", lambda: None)  # a machine with loopback only
    with pytest.raises(LanError, match=r"no local network address found .* --lan-address IP \(or SB_LAN_ADDRESS\)"):
        choose_address(None)
