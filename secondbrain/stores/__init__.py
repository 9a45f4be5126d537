"""Implementations of the store Protocols in :mod:`secondbrain.ports`."""
