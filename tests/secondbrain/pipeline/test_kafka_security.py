"""Kafka client security options built from Settings (TLS and SASL for production clusters).

No SASL broker runs here, so these check the options every client receives; the plain path is
exercised by every pipeline test."""

from __future__ import annotations

import ssl
from pathlib import Path

import faust
import pytest
from pydantic import SecretStr

from secondbrain.pipeline.kafka_security import aiokafka_options, faust_credentials
from secondbrain.settings import Settings


def settings(**kw: object) -> Settings:
    return Settings(**kw)  # type: ignore[arg-type]


def test_plaintext_is_the_default_and_adds_nothing() -> None:
    assert aiokafka_options(settings()) == {"security_protocol": "PLAINTEXT"}
    assert faust_credentials(settings()) is None


def test_sasl_ssl_gives_every_client_the_same_credentials_and_a_verifying_context() -> None:
    s = settings(kafka_security_protocol="SASL_SSL", kafka_sasl_mechanism="SCRAM-SHA-512",
                 kafka_sasl_username="sb-extract", kafka_sasl_password=SecretStr("pw"))
    opts = aiokafka_options(s)
    assert opts["security_protocol"] == "SASL_SSL" and opts["sasl_mechanism"] == "SCRAM-SHA-512"
    assert opts["sasl_plain_username"] == "sb-extract" and opts["sasl_plain_password"] == "pw"
    assert isinstance(opts["ssl_context"], ssl.SSLContext)
    assert opts["ssl_context"].verify_mode == ssl.CERT_REQUIRED and opts["ssl_context"].check_hostname
    creds = faust_credentials(s)
    assert isinstance(creds, faust.SASLCredentials)
    assert creds.username == "sb-extract" and creds.password == "pw"
    assert creds.protocol.value == "SASL_SSL" and creds.mechanism.value == "SCRAM-SHA-512"


def test_sasl_without_credentials_says_which_settings_are_missing() -> None:
    with pytest.raises(ValueError, match="SB_KAFKA_SASL_USERNAME and SB_KAFKA_SASL_PASSWORD"):
        aiokafka_options(settings(kafka_security_protocol="SASL_PLAINTEXT"))


def test_tls_with_a_private_ca() -> None:
    ca = Path(ssl.get_default_verify_paths().cafile or "/etc/ssl/certs/ca-certificates.crt")
    s = settings(kafka_security_protocol="SSL", kafka_ssl_cafile=ca)
    opts = aiokafka_options(s)
    assert opts["security_protocol"] == "SSL" and "sasl_mechanism" not in opts
    assert isinstance(faust_credentials(s), faust.SSLCredentials)
