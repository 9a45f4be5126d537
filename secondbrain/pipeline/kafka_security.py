"""Kafka client security (TLS, SASL) from Settings, for every client the services open.

The faust stage apps, the gateway's outbox producer and the topic admin all connect the same
way, so a cluster with ``SASL_SSL`` listeners and ACLs (see ``schemas/README.md``) needs the
same four settings everywhere: ``SB_KAFKA_SECURITY_PROTOCOL``, ``SB_KAFKA_SASL_MECHANISM``,
``SB_KAFKA_SASL_USERNAME``/``SB_KAFKA_SASL_PASSWORD`` and ``SB_KAFKA_SSL_CAFILE``.
"""

from __future__ import annotations

import ssl
from typing import Any

from secondbrain.settings import Settings


def ssl_context(settings: Settings) -> ssl.SSLContext | None:
    """A verifying TLS context when the protocol uses TLS (with the configured CA, if any)."""
    if settings.kafka_security_protocol not in ("SSL", "SASL_SSL"):
        return None
    ctx = ssl.create_default_context(cafile=str(settings.kafka_ssl_cafile) if settings.kafka_ssl_cafile else None)
    return ctx


def _sasl_credentials(settings: Settings) -> tuple[str, str]:
    if not settings.kafka_sasl_username or settings.kafka_sasl_password is None:
        raise ValueError(f"SB_KAFKA_SECURITY_PROTOCOL={settings.kafka_security_protocol} needs "
                         "SB_KAFKA_SASL_USERNAME and SB_KAFKA_SASL_PASSWORD")
    return settings.kafka_sasl_username, settings.kafka_sasl_password.get_secret_value()


def aiokafka_options(settings: Settings) -> dict[str, Any]:
    """Keyword arguments for aiokafka producers, consumers and admin clients."""
    protocol = settings.kafka_security_protocol
    options: dict[str, Any] = {"security_protocol": protocol}
    context = ssl_context(settings)
    if context is not None:
        options["ssl_context"] = context
    if protocol.startswith("SASL_"):
        username, password = _sasl_credentials(settings)
        options.update(sasl_mechanism=settings.kafka_sasl_mechanism, sasl_plain_username=username,
                       sasl_plain_password=password)
    return options


def faust_credentials(settings: Settings) -> Any:
    """The ``broker_credentials`` of a faust app (``None`` for plain connections)."""
    import faust

    protocol = settings.kafka_security_protocol
    if protocol == "PLAINTEXT":
        return None
    if protocol == "SSL":
        return faust.SSLCredentials(ssl_context(settings))
    username, password = _sasl_credentials(settings)
    creds = faust.SASLCredentials(username=username, password=password, ssl_context=ssl_context(settings),
                                  mechanism=settings.kafka_sasl_mechanism)
    return creds
