"""The ports every HTTP service's routes take, as FastAPI dependencies read from ``app.state.runtime``
(each service's ``deps`` module adds its own), who the request acts for (:mod:`services.access`), and this
process's outbox relay (``app.state.relay``, none where another process publishes), which the gateway's and
the importers' submissions share."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from secondbrain.pipeline.relay import OutboxRelay
from secondbrain.ports import MetadataStore, ObjectStore
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.access import AdminUser, CurrentPrincipal, CurrentUser, request_runtime

__all__ = ["AdminUser", "CurrentPrincipal", "CurrentUser", "MetadataDep", "ObjectsDep", "RelayDep", "RuntimeDep",
           "SettingsDep", "get_metadata", "get_objects", "get_relay", "get_runtime", "get_settings", "public_base",
           "relay_of"]


async def get_runtime(request: Request) -> Runtime:
    return request_runtime(request)


async def get_settings(request: Request) -> Settings:
    return request_runtime(request).settings


async def get_metadata(request: Request) -> MetadataStore:
    return request_runtime(request).metadata


async def get_objects(request: Request) -> ObjectStore:
    return request_runtime(request).objects


def public_base(request: Request, settings: Settings) -> str:
    """The address links are made with: SB_PUBLIC_URL when set (a proxy's https address, which the phone and
    calendar apps reach), else the address the request came to."""
    return settings.public_url or str(request.base_url).rstrip("/")


def relay_of(request: Request) -> OutboxRelay | None:
    relay: OutboxRelay | None = getattr(request.app.state, "relay", None)
    return relay


async def get_relay(request: Request) -> OutboxRelay | None:
    return relay_of(request)


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
MetadataDep = Annotated[MetadataStore, Depends(get_metadata)]
ObjectsDep = Annotated[ObjectStore, Depends(get_objects)]
RelayDep = Annotated[OutboxRelay | None, Depends(get_relay)]
