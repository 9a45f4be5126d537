"""query service."""
