"""What the HTTP security checks (Host allowlist, cross-site refusal, head limits) cost per request.

    .venv/bin/python bench/http_checks.py

Runs the middleware's check on a typical request many times and prints microseconds per request,
next to the cost of the one thing every authenticated request already does (a key lookup in
Postgres), measured on an embedded PostgreSQL started for the purpose.
"""

from __future__ import annotations

import argparse
import platform
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from bench import charts
from secondbrain.http_security import SecurityMiddleware

N = 200_000


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    charts.docs_option(ap)
    args = ap.parse_args()
    guard = SecurityMiddleware(lambda *a: None, allowed_hosts=("notes.example.org",),  # type: ignore[arg-type]
                               allowed_origins=("https://app.example.org",))
    scope = {"type": "http", "method": "POST", "path": "/v1/notes", "raw_path": b"/v1/notes", "query_string": b"",
             "scheme": "http", "headers": [(b"host", b"127.0.0.1:8000"), (b"origin", b"http://127.0.0.1:8000"),
                                           (b"content-type", b"application/json"), (b"accept", b"*/*"),
                                           (b"authorization", b"Bearer sb_x_" + b"y" * 43)]}
    started = time.perf_counter()
    for _ in range(N):
        guard.check(scope)
    per = (time.perf_counter() - started) / N * 1e6
    print(f"Host/Origin/head checks: {per:.2f} µs per request ({N:,} requests)")
    import tempfile

    from secondbrain.infra.postgres import EmbeddedPostgres
    from secondbrain.stores.metadata_pg import PostgresMetadataStore

    with tempfile.TemporaryDirectory() as tmp:
        Path(tmp).chmod(0o755)  # the embedded server may run as its own OS user
        with EmbeddedPostgres(Path(tmp) / "pg") as pg, PostgresMetadataStore(pg.dsn) as store:
            store.database.migrate()
            store.users.ensure_user("bench")
            _, key = store.api_keys.create_api_key("bench", "bench")
            for _ in range(50):
                store.api_keys.authenticate(key)
            m = 500
            started = time.perf_counter()
            for _ in range(m):
                store.api_keys.authenticate(key)
            lookup = (time.perf_counter() - started) / m * 1e6
            print(f"key lookup in Postgres (for scale): {lookup:.0f} µs per request")
    print(f"machine: {platform.machine()}, Python {platform.python_version()}")
    if args.publish:
        charts.publish("http_checks", "What the HTTP checks cost", [charts.table(
            ["measure", "per request"],
            [["Host, Origin and request-head checks", f"{per:.2f} µs"],
             ["a key lookup in PostgreSQL, for scale", f"{lookup:.0f} µs"]])])


if __name__ == "__main__":
    main()
