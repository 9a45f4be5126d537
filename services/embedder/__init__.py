"""embedder service."""
