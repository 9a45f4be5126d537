"""A browser's side of web push for tests: its key pair (:class:`Browser`), and a push service on loopback
(:class:`PushService`, plain HTTP or HTTPS with its own certificate) that keeps each push it is sent, so a test
checks what a browser would: the VAPID signature (:func:`vapid_claims`) and the payload it decrypts."""

from __future__ import annotations

import base64
import datetime as dt
import ipaddress
import json
import os
import ssl
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import http_ece
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec
from cryptography.hazmat.primitives.asymmetric.utils import encode_dss_signature
from cryptography.x509.oid import NameOID


def b64url(raw: bytes) -> str:
    return base64.urlsafe_b64encode(raw).rstrip(b"=").decode()


def unb64url(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


class Browser:
    """A browser's side of a subscription: its key pair and auth secret (what the page's pushManager makes)."""

    def __init__(self) -> None:
        self.private = ec.generate_private_key(ec.SECP256R1())
        self.auth_secret = os.urandom(16)
        self.p256dh = b64url(self.private.public_key().public_bytes(
            serialization.Encoding.X962, serialization.PublicFormat.UncompressedPoint))
        self.auth = b64url(self.auth_secret)

    def subscription(self, endpoint: str) -> dict[str, Any]:
        """What ``PushSubscription.toJSON()`` gives the page."""
        return {"endpoint": endpoint, "expirationTime": None, "keys": {"p256dh": self.p256dh, "auth": self.auth}}

    def read(self, body: bytes) -> dict[str, Any]:
        plain: bytes = http_ece.decrypt(body, private_key=self.private, auth_secret=self.auth_secret,
                                        version="aes128gcm")
        decoded: dict[str, Any] = json.loads(plain)
        return decoded


def self_signed(folder: Path) -> tuple[Path, Path]:
    """A certificate for 127.0.0.1 and its key, as PEM files in ``folder``."""
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, "127.0.0.1")])
    now = dt.datetime.now(dt.UTC)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now - dt.timedelta(minutes=5))
            .not_valid_after(now + dt.timedelta(days=1))
            .add_extension(x509.SubjectAlternativeName([x509.IPAddress(ipaddress.ip_address("127.0.0.1"))]), False)
            .add_extension(x509.BasicConstraints(ca=True, path_length=None), True)
            .sign(key, hashes.SHA256()))
    cert_file, key_file = folder / "push-cert.pem", folder / "push-key.pem"
    cert_file.write_bytes(cert.public_bytes(serialization.Encoding.PEM))
    key_file.write_bytes(key.private_bytes(serialization.Encoding.PEM, serialization.PrivateFormat.PKCS8,
                                           serialization.NoEncryption()))
    return cert_file, key_file


class PushService:
    """A push service on loopback: keeps every request; answers 201, or 410 under /gone/ (an unsubscribed browser).
    With ``tls_folder`` it speaks HTTPS with a certificate of its own (``cert_file``, for the client to trust)."""

    def __init__(self, tls_folder: Path | None = None) -> None:
        self.received: list[tuple[str, dict[str, str], bytes]] = []
        outer = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
                outer.received.append((self.path, {k.lower(): v for k, v in self.headers.items()}, body))
                self.send_response(410 if self.path.startswith("/gone/") else 201)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args: Any) -> None:
                pass

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.cert_file: Path | None = None
        scheme = "http"
        if tls_folder is not None:
            self.cert_file, key_file = self_signed(tls_folder)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(self.cert_file, key_file)
            self.server.socket = context.wrap_socket(self.server.socket, server_side=True)
            scheme = "https"
        self.origin = f"{scheme}://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)

    def __enter__(self) -> PushService:
        self.thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.server.shutdown()
        self.server.server_close()


def vapid_claims(authorization: str, server_key: str) -> dict[str, Any]:
    """The claims of a VAPID ``Authorization`` header, once its signature is checked against ``server_key``."""
    scheme, _, params = authorization.partition(" ")
    assert scheme == "vapid"
    fields = dict(p.strip().split("=", 1) for p in params.split(","))
    assert fields["k"] == server_key  # signed by the key the browser subscribed with
    head, payload, signature = fields["t"].split(".")
    raw = unb64url(signature)
    key = ec.EllipticCurvePublicKey.from_encoded_point(ec.SECP256R1(), unb64url(server_key))
    key.verify(encode_dss_signature(int.from_bytes(raw[:32], "big"), int.from_bytes(raw[32:], "big")),
               f"{head}.{payload}".encode(), ec.ECDSA(hashes.SHA256()))  # raises if forged
    assert json.loads(unb64url(head))["alg"] == "ES256"
    claims: dict[str, Any] = json.loads(unb64url(payload))
    return claims
