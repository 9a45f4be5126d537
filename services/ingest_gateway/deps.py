"""What the gateway's routes take, as FastAPI dependencies: the shared ports, sign-in and outbox relay
(:mod:`services.deps`), the submissions made through that relay, and the networks URLs may be fetched from."""

from __future__ import annotations

import functools
from typing import Annotated

from fastapi import Depends, HTTPException, Request

from secondbrain.addresses import Networks, parse_networks
from secondbrain.ports import VectorStore
from secondbrain.runtime import Runtime
from secondbrain.submissions import Submissions
from services.access import request_runtime
from services.deps import (
    AdminUser,
    CurrentPrincipal,
    CurrentUser,
    MetadataDep,
    ObjectsDep,
    RelayDep,
    RuntimeDep,
    SettingsDep,
    relay_of,
)

__all__ = ["AdminUser", "CurrentPrincipal", "CurrentUser", "MetadataDep", "NetworksDep", "ObjectsDep", "RelayDep",
           "RuntimeDep", "SettingsDep", "SubmissionsDep", "VectorsDep", "vectors_of"]


async def get_submissions(request: Request) -> Submissions:
    return Submissions(request_runtime(request), relay_of(request))


@functools.cache
def _networks(text: str) -> Networks:
    return parse_networks(text)


async def get_networks(request: Request) -> Networks:
    """The private networks ``SB_FETCH_ALLOW_NETWORKS`` lets the fetcher reach."""
    return _networks(request_runtime(request).settings.fetch_allow_networks)


def vectors_of(rt: Runtime) -> VectorStore:
    """The vector store, or 503 where this process has none."""
    if rt.vectors is None:
        raise HTTPException(503, "this process has no vector store configured (SB_VECTOR_STORE), "
                                 "so it cannot remove or export indexed passages")
    return rt.vectors


async def get_vectors(request: Request) -> VectorStore:
    return vectors_of(request_runtime(request))


SubmissionsDep = Annotated[Submissions, Depends(get_submissions)]
NetworksDep = Annotated[Networks, Depends(get_networks)]
VectorsDep = Annotated[VectorStore, Depends(get_vectors)]
