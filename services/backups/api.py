"""The backup routes, for administrators only (a backup holds every user's data):

* ``GET /v1/admin/backups``: the last backup and its size, whether it is overdue (older than twice
  ``SB_BACKUP_INTERVAL``), the one being written (what, how far, time left), the archives kept;
* ``POST /v1/admin/backups``: back up now (answers when the archive is written; 409 while one is);
* ``GET /v1/admin/backups/{name}``: download one archive.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Request
from fastapi.responses import FileResponse

from secondbrain.backup import folder as backup_folder
from secondbrain.backup.archive import BackupError
from services.access import AdminUser
from services.backups.service import BackupBusy, Backups

router = APIRouter(tags=["backups"])

NOT_HERE = ("this server does not take backups itself (the distributed services back up with `secondbrain backup`, "
            "e.g. from a CronJob): see the backup guide")


def _backups(request: Request) -> Backups:
    backups: Backups | None = getattr(request.app.state, "backups", None)
    if backups is None:
        raise HTTPException(404, NOT_HERE)
    return backups


@router.get("/v1/admin/backups", summary="Where backups stand (admins)")
async def backup_status(request: Request, _admin: AdminUser) -> dict[str, Any]:
    return await asyncio.to_thread(_backups(request).status)


@router.post("/v1/admin/backups", status_code=201, summary="Back up the whole instance now (admins)")
async def back_up_now(request: Request, _admin: AdminUser) -> dict[str, Any]:
    backups = _backups(request)
    try:
        archive = await asyncio.to_thread(backups.take)
    except BackupBusy as exc:
        raise HTTPException(409, str(exc)) from None
    except BackupError as exc:
        raise HTTPException(500, f"the backup failed: {exc}") from None
    return {"archive": archive.json(), "users": backups.last_users, "status": backups.status()}


@router.get("/v1/admin/backups/{name}", summary="Download one backup archive (admins)",
            response_class=FileResponse)
async def download_backup(name: str, request: Request, _admin: AdminUser) -> FileResponse:
    backups = _backups(request)
    if not backup_folder.is_archive_name(name):
        raise HTTPException(404, "no such backup")
    path = backups.folder / name
    if not path.is_file():
        raise HTTPException(404, "no such backup")
    return FileResponse(path, media_type="application/octet-stream", filename=name)
