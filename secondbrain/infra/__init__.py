"""Launchers for the local stand-ins of external services.

Used by embedded mode (``secondbrain up``) and by the test suite alike: a Kafka-compatible
broker (Tansu), PostgreSQL (pgserver) and S3 (moto, or MinIO via testcontainers).  Each
launcher has ``start()`` / ``stop()``, works as a context manager and exposes how to
connect.  Heavy third-party modules are imported only when a launcher starts.
"""

from secondbrain.infra.ports import free_port
from secondbrain.infra.postgres import EmbeddedPostgres, machine_postgres_dsn
from secondbrain.infra.s3 import (
    MinioContainerHandle,
    MotoS3Server,
    docker_available,
    try_testcontainers_minio,
)
from secondbrain.infra.tansu import TansuBroker, TansuNotFound, TansuStartError, find_tansu_binary

__all__ = [
    "EmbeddedPostgres",
    "MinioContainerHandle",
    "MotoS3Server",
    "TansuBroker",
    "TansuNotFound",
    "TansuStartError",
    "docker_available",
    "find_tansu_binary",
    "free_port",
    "machine_postgres_dsn",
    "try_testcontainers_minio",
]
