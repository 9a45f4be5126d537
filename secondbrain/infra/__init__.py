"""Launchers for the services embedded mode (``secondbrain up``) runs itself.

A Kafka-compatible broker (Tansu) and PostgreSQL (pgserver).  Each launcher has ``start()`` /
``stop()``, works as a context manager and exposes how to connect.  Heavy third-party modules
are imported only when a launcher starts.  Stand-ins used only by the tests and benchmarks (an
S3 server, llama.cpp's server, a Qdrant REST server) live in the repository's ``devtools/``.
"""

from secondbrain.infra.ports import free_port
from secondbrain.infra.postgres import EmbeddedPostgres, machine_postgres_dsn
from secondbrain.infra.tansu import TansuBroker, TansuNotFound, TansuStartError, find_tansu_binary

__all__ = [
    "EmbeddedPostgres",
    "TansuBroker",
    "TansuNotFound",
    "TansuStartError",
    "find_tansu_binary",
    "free_port",
    "machine_postgres_dsn",
]
