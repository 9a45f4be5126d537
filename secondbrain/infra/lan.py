"""``secondbrain up --lan``: the machine's address on the local network and a self-signed certificate for it.

A phone installs the web page as an app and shares to it only over HTTPS, so the LAN listener needs a
certificate.  No public CA signs a private address, so the certificate is self-signed: made once, kept in
the data directory (the key 0600) and reused, so the phone is told to trust it once and the fingerprint
the person compared stays the same.  It is made again only when it no longer fits (the address changed,
it is about to expire, the files are damaged).
"""

from __future__ import annotations

import datetime as dt
import ipaddress
import os
import re
import socket
from dataclasses import dataclass
from pathlib import Path

from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.x509.oid import ExtendedKeyUsageOID, NameOID

CERT_FILE = "lan-cert.pem"
KEY_FILE = "lan-key.pem"
# Apple refuses TLS server certificates valid for longer than 825 days, trusted by hand or not.
VALID_DAYS = 825
RENEW_BEFORE = dt.timedelta(days=30)  # a certificate this close to its end is replaced at the next start
_LABEL = r"[A-Za-z0-9]([A-Za-z0-9-]{0,61}[A-Za-z0-9])?"
_HOST_NAME = re.compile(rf"^{_LABEL}(\.{_LABEL})*$")  # a name a certificate can carry (no '_', ASCII only)


class LanError(Exception):
    """No usable LAN address or certificate; the message is the sentence to show."""


def detect_address() -> str | None:
    """The IPv4 address of the interface this machine's traffic leaves by, when it is a private one.

    Connecting a UDP socket sends nothing: the kernel only picks the route, and with it the source
    address.  A public address is not taken on a guess (the sign-in page would face the internet)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        try:
            sock.connect(("192.0.2.1", 9))  # TEST-NET-1: never reached, any default route will do
            found = str(sock.getsockname()[0])
        except OSError:  # no route at all: loopback only
            return None
    ip = ipaddress.IPv4Address(found)
    if ip.is_unspecified or ip.is_loopback or ip.is_link_local or not ip.is_private:
        return None
    return found


def choose_address(chosen: str | None) -> str:
    """The LAN address to serve on: ``chosen`` (checked to be an IPv4 address of this machine) or the
    detected one.  Raises :class:`LanError` with what to do when there is none."""
    if not chosen:
        found = detect_address()
        if found is None:
            raise LanError("no local network address found (this machine has no private IPv4 address on a "
                           "route out): connect it to your network, or name the address with --lan-address IP "
                           "(or SB_LAN_ADDRESS)")
        return found
    try:
        ip = ipaddress.IPv4Address(chosen.strip())
    except ValueError:
        raise LanError(f"--lan-address {chosen!r} is not an IPv4 address (like 192.168.1.20)") from None
    if ip.is_unspecified or ip.is_multicast or ip == ipaddress.IPv4Address("255.255.255.255"):
        raise LanError(f"--lan-address {ip} is not one machine's address: name this machine's address on the "
                       "network (like 192.168.1.20), not all of them")
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((str(ip), 0))
        except OSError:
            raise LanError(f"--lan-address {ip} is not an address of this machine (see `ip addr` or "
                           "`ifconfig`)") from None
    return str(ip)


@dataclass(frozen=True)
class LanCertificate:
    """The certificate the LAN listener serves, and whether it was made by this start."""

    cert_file: Path
    key_file: Path
    fingerprint: str  # SHA-256 of the certificate, as phones and browsers show it: AB:CD:...
    made: bool
    why: str = ""  # why a new one was made ("" for the first)


def fingerprint(cert: x509.Certificate) -> str:
    """The SHA-256 fingerprint of ``cert``, upper-case hex pairs joined by colons."""
    return cert.fingerprint(hashes.SHA256()).hex(":").upper()


def ensure_certificate(data_dir: Path, address: str, hostname: str | None = None,
                       now: dt.datetime | None = None) -> LanCertificate:
    """The certificate for ``address`` kept in ``data_dir``: the one there when it still fits, else a new one."""
    now = now or dt.datetime.now(dt.UTC)
    cert_file, key_file = data_dir / CERT_FILE, data_dir / KEY_FILE
    why = ""
    if cert_file.exists() or key_file.exists():
        why = _unfit(cert_file, key_file, address, now)
        if not why:
            cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
            return LanCertificate(cert_file, key_file, fingerprint(cert), made=False)
    cert = _make(cert_file, key_file, address, hostname if hostname is not None else socket.gethostname(), now)
    return LanCertificate(cert_file, key_file, fingerprint(cert), made=True, why=why)


def _unfit(cert_file: Path, key_file: Path, address: str, now: dt.datetime) -> str:
    """Why the certificate kept is not served again ("" when it is)."""
    try:
        cert = x509.load_pem_x509_certificate(cert_file.read_bytes())
        key = serialization.load_pem_private_key(key_file.read_bytes(), password=None)
    except (OSError, ValueError, TypeError) as exc:
        return f"the certificate or its key could not be read ({type(exc).__name__})"
    if cert.public_key() != key.public_key():
        return "the key does not belong to the certificate"
    try:
        names = cert.extensions.get_extension_for_class(x509.SubjectAlternativeName).value
    except x509.ExtensionNotFound:
        names = x509.SubjectAlternativeName([])
    if ipaddress.IPv4Address(address) not in names.get_values_for_type(x509.IPAddress):
        return f"it was made for {', '.join(map(str, names.get_values_for_type(x509.IPAddress))) or 'another address'}"
    if cert.not_valid_after_utc - now < RENEW_BEFORE:
        return f"it expires on {cert.not_valid_after_utc:%Y-%m-%d}"
    return ""


def _make(cert_file: Path, key_file: Path, address: str, hostname: str, now: dt.datetime) -> x509.Certificate:
    key = ec.generate_private_key(ec.SECP256R1())
    sans: list[x509.GeneralName] = [x509.IPAddress(ipaddress.IPv4Address(address))]
    if _HOST_NAME.match(hostname) and hostname != "localhost":
        sans.append(x509.DNSName(hostname))
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, f"secondbrain {hostname or address}"[:64]),
                      x509.NameAttribute(NameOID.ORGANIZATION_NAME, "secondbrain (self-signed)")])
    cert = (
        x509.CertificateBuilder()
        .subject_name(name).issuer_name(name)
        .public_key(key.public_key())
        .serial_number(x509.random_serial_number())
        .not_valid_before(now - dt.timedelta(minutes=5))  # a phone's clock a little behind still accepts it
        .not_valid_after(now + dt.timedelta(days=VALID_DAYS))
        .add_extension(x509.SubjectAlternativeName(sans), critical=False)
        # Its own authority, so a phone can install it as a trusted certificate (Android's "CA certificate",
        # iOS's certificate trust settings); path length 0: it can sign nothing else that would be trusted.
        .add_extension(x509.BasicConstraints(ca=True, path_length=0), critical=True)
        .add_extension(x509.KeyUsage(digital_signature=True, key_cert_sign=True, content_commitment=False,
                                     key_encipherment=False, data_encipherment=False, key_agreement=False,
                                     crl_sign=False, encipher_only=False, decipher_only=False), critical=True)
        .add_extension(x509.ExtendedKeyUsage([ExtendedKeyUsageOID.SERVER_AUTH]), critical=False)
        .add_extension(x509.SubjectKeyIdentifier.from_public_key(key.public_key()), critical=False)
        .add_extension(x509.AuthorityKeyIdentifier.from_issuer_public_key(key.public_key()), critical=False)
        .sign(key, hashes.SHA256())
    )
    key_pem = key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                serialization.NoEncryption())
    # The key first and readable by the owner only; the certificate is public.
    _write(key_file, key_pem, 0o600)
    _write(cert_file, cert.public_bytes(serialization.Encoding.PEM), 0o644)
    return cert


def _write(path: Path, data: bytes, mode: int) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.unlink(missing_ok=True)
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    os.replace(tmp, path)  # a start cut short leaves the old file or the new one, never half of one
