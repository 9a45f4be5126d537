"""The ports every HTTP service's routes take, as FastAPI dependencies read from ``app.state.runtime``
(each service's ``deps`` module adds its own), and who the request acts for (:mod:`services.access`)."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from secondbrain.ports import MetadataStore, ObjectStore, VectorStore
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.access import AdminUser, CurrentPrincipal, CurrentUser, request_runtime

__all__ = ["AdminUser", "CurrentPrincipal", "CurrentUser", "MetadataDep", "ObjectsDep", "RuntimeDep",
           "SettingsDep", "VectorsDep", "get_metadata", "get_objects", "get_settings", "get_vectors"]

RuntimeDep = Annotated[Runtime, Depends(request_runtime)]


def get_settings(request: Request) -> Settings:
    return request_runtime(request).settings


def get_metadata(request: Request) -> MetadataStore:
    return request_runtime(request).metadata


def get_objects(request: Request) -> ObjectStore:
    return request_runtime(request).objects


def get_vectors(request: Request) -> VectorStore:
    vectors = request_runtime(request).vectors
    if vectors is None:  # the app factory mounts routes that need it only where the process has one
        raise RuntimeError("this process has no vector store")
    return vectors


SettingsDep = Annotated[Settings, Depends(get_settings)]
MetadataDep = Annotated[MetadataStore, Depends(get_metadata)]
ObjectsDep = Annotated[ObjectStore, Depends(get_objects)]
VectorsDep = Annotated[VectorStore, Depends(get_vectors)]
