"""What the web sign-in routes take, as FastAPI dependencies (:mod:`services.deps`)."""

from __future__ import annotations

from services.deps import CurrentPrincipal, MetadataDep, SettingsDep

__all__ = ["CurrentPrincipal", "MetadataDep", "SettingsDep"]
