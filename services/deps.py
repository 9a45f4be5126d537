"""The ports every HTTP service's routes take, as FastAPI dependencies read from ``app.state.runtime``
(each service's ``deps`` module adds its own), and who the request acts for (:mod:`services.access`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from secondbrain.ports import MetadataStore, ObjectStore
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.access import AdminUser, CurrentPrincipal, CurrentUser, request_runtime

__all__ = ["AdminUser", "CurrentPrincipal", "CurrentUser", "MetadataDep", "ObjectsDep", "RuntimeDep",
           "SettingsDep", "get_metadata", "get_objects", "get_runtime", "get_settings"]


async def get_runtime(request: Request) -> Runtime:
    return request_runtime(request)


async def get_settings(request: Request) -> Settings:
    return request_runtime(request).settings


async def get_metadata(request: Request) -> MetadataStore:
    return request_runtime(request).metadata


async def get_objects(request: Request) -> ObjectStore:
    return request_runtime(request).objects


RuntimeDep = Annotated[Runtime, Depends(get_runtime)]
SettingsDep = Annotated[Settings, Depends(get_settings)]
MetadataDep = Annotated[MetadataStore, Depends(get_metadata)]
ObjectsDep = Annotated[ObjectStore, Depends(get_objects)]
