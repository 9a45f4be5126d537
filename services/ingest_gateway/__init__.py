"""ingest_gateway service."""
