"""Users and API keys over HTTP: each user manages their own keys; admins manage everyone's.

The same operations exist in the CLI (``secondbrain users`` / ``secondbrain keys``), which
talks to the database directly.  Secrets are shown once, in the answer that creates them;
only their SHA-256 is stored.
"""

from __future__ import annotations

import asyncio
from typing import Any

from fastapi import APIRouter, HTTPException, Response
from pydantic import BaseModel, Field

from secondbrain import keys, lifecycle
from secondbrain.ports import ApiKeyInfo, KeyScope, MetadataStore
from secondbrain.validation import Text
from services.http_helpers import PendingCaptures
from services.ingest_gateway.deps import AdminUser, CurrentPrincipal, MetadataDep, RuntimeDep, SettingsDep


class KeyIn(BaseModel):
    """A key to create."""

    name: Text = Field("api", min_length=1, max_length=100, description="What the key is for (shown in lists).")
    scope: KeyScope = Field("user", description="'user' (HTTP API), 'capture' (only adds notes, files, pages "
                                                "and links, and follows their jobs: for a browser extension), "
                                                "'producer' (signs Kafka events only) or 'admin' (admins only).")


class UserIn(BaseModel):
    """A user to create."""

    user_id: Text = Field(min_length=1, max_length=128, description="Letters, digits, '_', '.', '@' or '-'.")
    display_name: Text | None = Field(None, max_length=200)
    create_key: bool = Field(True, description="Also create a first user key and return it.")


def key_json(k: ApiKeyInfo) -> dict[str, Any]:
    """A key as listed (never its secret)."""
    return {"key_id": k.key_id, "user_id": k.user_id, "name": k.name, "scope": k.scope,
            "created_at": k.created_at.isoformat(),
            "last_used_at": k.last_used_at.isoformat() if k.last_used_at else None,
            "revoked": k.revoked_at is not None}


router = APIRouter(tags=["users and keys"])


async def make_key(store: MetadataStore, user_id: str, body: KeyIn) -> dict[str, Any]:
    try:
        info, secret = await asyncio.to_thread(store.api_keys.create_api_key, user_id, body.name, body.scope)
    except KeyError:
        raise HTTPException(404, f"no user {user_id!r}") from None
    return {**key_json(info), "api_key": secret,
            "note": "shown once: store it now; send it as 'Authorization: Bearer <key>'"}


# ---------------------------------------------------------------- self-service


@router.get("/v1/me", summary="Who this key acts for")
async def me(principal: CurrentPrincipal, pending: PendingCaptures, settings: SettingsDep) -> dict[str, Any]:
    """Who the key acts for; with a key that may read, how many captures are still in the pipeline and how
    many may be (``SB_MAX_PENDING_JOBS``; 0: no limit): past it, captures and imports wait."""
    out: dict[str, Any] = {"user_id": principal.user_id, "key_id": principal.key_id, "scope": principal.scope}
    if principal.scope != "capture":  # a capture key learns nothing of what the person has
        out["pending_jobs"] = pending
        out["max_pending_jobs"] = settings.max_pending_jobs
    return out


@router.get("/v1/keys", summary="Your API keys")
async def my_keys(principal: CurrentPrincipal, store: MetadataDep) -> dict[str, Any]:
    rows = await asyncio.to_thread(store.api_keys.list_api_keys, principal.user_id)
    return {"keys": [key_json(k) for k in rows]}


@router.post("/v1/keys", status_code=201, summary="Create an API key for yourself")
async def new_key(body: KeyIn, principal: CurrentPrincipal, store: MetadataDep) -> dict[str, Any]:
    if body.scope == "admin" and principal.scope != "admin":
        raise HTTPException(403, "only an admin can create admin keys")
    return await make_key(store, principal.user_id, body)


@router.delete("/v1/keys/{key_id}", status_code=204, summary="Revoke one of your keys")
async def revoke_key(key_id: str, principal: CurrentPrincipal, store: MetadataDep) -> Response:
    if not await asyncio.to_thread(store.api_keys.revoke_api_key, principal.user_id, key_id):
        raise HTTPException(404, "no such key")
    return Response(status_code=204)


# ---------------------------------------------------------------- admin


@router.get("/v1/admin/users", summary="Every user (admin)")
async def users(_admin: AdminUser, store: MetadataDep) -> dict[str, Any]:
    rows = await asyncio.to_thread(store.users.list_users)
    return {"users": [{"user_id": u.user_id, "display_name": u.display_name,
                       "created_at": u.created_at.isoformat(), "active_keys": u.active_keys} for u in rows]}


@router.post("/v1/admin/users", status_code=201, summary="Create a user, with a first key (admin)")
async def add_user(body: UserIn, _admin: AdminUser, store: MetadataDep) -> dict[str, Any]:
    try:
        keys.check_user_id(body.user_id)
    except ValueError as exc:
        raise HTTPException(422, str(exc)) from None
    await asyncio.to_thread(store.users.ensure_user, body.user_id, body.display_name)
    out: dict[str, Any] = {"user_id": body.user_id}
    if body.create_key:
        out["key"] = await make_key(store, body.user_id, KeyIn(name="first key", scope="user"))
    return out


@router.delete("/v1/admin/users/{user_id}", summary="Erase a user and everything they stored (admin)")
async def erase(user_id: str, _admin: AdminUser, rt: RuntimeDep, confirm: str | None = None) -> dict[str, Any]:
    """Remove the user's keys, sources, documents, passages, raw files and conversations for good.
    Needs ``?confirm=<user id>``."""
    store = rt.metadata
    if not await asyncio.to_thread(store.users.user_exists, user_id):
        raise HTTPException(404, f"no user {user_id!r}")
    if confirm != user_id:
        raise HTTPException(400, "erasing a user deletes everything they stored and cannot be undone; to "
                                 f"confirm, repeat the user id: DELETE /v1/admin/users/{user_id}?confirm={user_id}")
    if rt.vectors is None:
        raise HTTPException(503, "this process has no vector store configured, so it cannot erase passages")
    report = await asyncio.to_thread(lifecycle.erase_user, store, rt.objects, rt.vectors, user_id)
    return {"erased": user_id, **report.to_json()}


@router.get("/v1/admin/users/{user_id}/keys", summary="A user's keys (admin)")
async def user_keys(user_id: str, _admin: AdminUser, store: MetadataDep) -> dict[str, Any]:
    if not await asyncio.to_thread(store.users.user_exists, user_id):
        raise HTTPException(404, f"no user {user_id!r}")
    return {"keys": [key_json(k) for k in await asyncio.to_thread(store.api_keys.list_api_keys, user_id)]}


@router.post("/v1/admin/users/{user_id}/keys", status_code=201, summary="Create a key for a user (admin)")
async def user_new_key(user_id: str, body: KeyIn, _admin: AdminUser, store: MetadataDep) -> dict[str, Any]:
    return await make_key(store, user_id, body)


@router.delete("/v1/admin/users/{user_id}/keys/{key_id}", status_code=204,
               summary="Revoke a user's key (admin)")
async def user_revoke_key(user_id: str, key_id: str, _admin: AdminUser, store: MetadataDep) -> Response:
    if not await asyncio.to_thread(store.api_keys.revoke_api_key, user_id, key_id):
        raise HTTPException(404, "no such key")
    return Response(status_code=204)

