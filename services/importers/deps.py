"""What the import routes take, as FastAPI dependencies: the shared sign-in and settings
(:mod:`services.deps`), this process's outbox relay and a submitter of captures through it."""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Request

from services.access import request_runtime
from services.deps import CurrentUser, RelayDep, SettingsDep, relay_of
from services.importers.submit import CaptureSubmitter

__all__ = ["CaptureSubmitterDep", "CurrentUser", "RelayDep", "SettingsDep"]


async def get_submitter(request: Request) -> CaptureSubmitter:
    return CaptureSubmitter(request_runtime(request), relay_of(request))


CaptureSubmitterDep = Annotated[CaptureSubmitter, Depends(get_submitter)]
