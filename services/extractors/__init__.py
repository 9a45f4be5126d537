"""extractors service."""
