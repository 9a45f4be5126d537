"""The ``secondbrain`` command.

Servers: ``up`` (embedded, everything in one process), ``gateway``, ``query`` and
``worker STAGE...`` (distributed pieces), ``migrate`` and ``topics`` (one-off set-up jobs).
Clients of the HTTP API: ``ingest``, ``search``, ``ask``, ``jobs``, ``sources``, ``export``.
Admin commands on the database: ``users``, ``keys``, ``retention``.

Exit codes: 0 success; 1 the work failed or found nothing; 2 bad usage or the service could
not be reached.
"""

from app.cli.parser import build_parser, main

__all__ = ["build_parser", "main"]
