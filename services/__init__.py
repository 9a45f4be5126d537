"""The pipeline, one folder per stage: ingest_gateway -> extractors -> chunker -> embedder, and query."""
