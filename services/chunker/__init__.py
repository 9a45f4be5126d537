"""chunker service."""
