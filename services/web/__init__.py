"""The web app: a hand-written page (HTML, native ES modules, one stylesheet) served at ``/``.

No build step: the files under ``static/`` ship as package data and are served as they are:
``app.js`` is the entry module and imports the others from ``static/js/``.
The page talks to the same origin's HTTP API with relative URLs, so whichever process serves
it (the embedded server, the gateway or the query service) must sit behind one address with
the rest of the API (as ``deploy/k8s``'s Ingress does).  The page itself is public; every
API call it makes carries the user's key.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass
from importlib import resources

from fastapi import APIRouter, HTTPException, Request, Response

from secondbrain.sniff import shareable
from services.web.deps import SettingsDep

JAVASCRIPT = "text/javascript; charset=utf-8"
# Which files in static/js/ are served: lower-case names with one dot (".js"), so nothing else that
# lands in the folder (a dotfile, an editor's backup) becomes reachable.
MODULE_NAME = re.compile(r"[a-z][a-z0-9_-]*\.js")


def _modules() -> dict[str, str]:
    folder = resources.files(__package__).joinpath("static", "js")
    return {f"js/{entry.name}": JAVASCRIPT for entry in folder.iterdir()
            if entry.is_file() and MODULE_NAME.fullmatch(entry.name)}


# Everything served under /web/, by its path there: an allowlist, so no other file (and no "..")
# can be asked for.  Every module in static/js/ is listed as the package holds them.
ASSETS = {"app.js": JAVASCRIPT, "save.js": JAVASCRIPT, "app.css": "text/css; charset=utf-8",
          "icon.svg": "image/svg+xml",
          "icon-192.png": "image/png", "icon-512.png": "image/png", "icon-maskable-512.png": "image/png",
          "manifest.webmanifest": "application/manifest+json", **_modules()}

# Everything the page loads comes from this origin; raw files are shown from blob: URLs (the page
# fetches them with the user's key), so frames, media and images may also come from blob:.
CSP = ("default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' blob: data:; "
       "media-src 'self' blob:; frame-src 'self' blob:; object-src 'none'; base-uri 'none'; "
       "form-action 'self'; frame-ancestors 'none'")
SECURITY_HEADERS = {"X-Content-Type-Options": "nosniff", "Referrer-Policy": "no-referrer",
                    "Content-Security-Policy": CSP, "X-Frame-Options": "DENY"}


@dataclass(frozen=True, slots=True)
class Asset:
    """A static file held in memory with its validator."""

    body: bytes
    media_type: str
    etag: str


def _load(name: str, media_type: str) -> Asset:
    body = resources.files(__package__).joinpath("static", *name.split("/")).read_bytes()
    return Asset(body, media_type, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


def _answer(request: Request, asset: Asset) -> Response:
    # no-cache: the browser revalidates every time (a cheap 304), so an upgrade shows at once.
    headers = {**SECURITY_HEADERS, "ETag": asset.etag, "Cache-Control": "no-cache"}
    if request.headers.get("if-none-match") == asset.etag:
        return Response(status_code=304, headers=headers)
    return Response(asset.body, media_type=asset.media_type, headers=headers)


def _service_worker(page: Asset, assets: dict[str, Asset]) -> Asset:
    """``static/sw.js`` after the list of the shell's files and a version that changes with any of them."""
    shell = ["/", *(f"/web/{name}" for name in sorted(assets))]
    version = hashlib.sha256("".join([page.etag, *(assets[n].etag for n in sorted(assets))]).encode()).hexdigest()[:16]
    head = f"const VERSION = {json.dumps(version)};\nconst SHELL = {json.dumps(shell)};\n"
    body = head.encode() + resources.files(__package__).joinpath("static", "sw.js").read_bytes()
    return Asset(body, JAVASCRIPT, '"' + hashlib.sha256(body).hexdigest()[:20] + '"')


class _Manifests:
    """The installed app's manifest: the static file, with every kind of file secondbrain reads in its share
    target's ``accept`` list and, when the server has a public address (SB_PUBLIC_URL), its start address,
    scope and share target there (what the phone opens and shares to)."""

    def __init__(self, static: bytes) -> None:
        self._static = json.loads(static)
        self._made: dict[str | None, Asset] = {}

    def get(self, public_url: str | None) -> Asset:
        if public_url not in self._made:
            m = json.loads(json.dumps(self._static))
            m["share_target"]["params"]["files"][0]["accept"] = shareable()
            if public_url:
                m["id"] = m["start_url"] = m["scope"] = f"{public_url}/"
                m["share_target"]["action"] = f"{public_url}/share"
            body = json.dumps(m, indent=2).encode()
            self._made[public_url] = Asset(body, "application/manifest+json",
                                           '"' + hashlib.sha256(body).hexdigest()[:20] + '"')
        return self._made[public_url]


def create_router() -> APIRouter:
    """``GET /`` (the page), ``GET /save`` (what the bookmarklet opens), ``GET /web/<path>`` (their modules,
    stylesheet, icons and manifest) and ``GET /sw.js`` (the installed app's service worker: served at the
    root so it may serve the page)."""
    page = _load("index.html", "text/html; charset=utf-8")
    save_page = _load("save.html", "text/html; charset=utf-8")
    assets = {name: _load(name, media_type) for name, media_type in ASSETS.items()}
    worker = _service_worker(page, assets)
    manifests = _Manifests(assets["manifest.webmanifest"].body)
    router = APIRouter(include_in_schema=False)

    @router.get("/")
    async def index(request: Request) -> Response:
        return _answer(request, page)

    @router.get("/save")
    async def save(request: Request) -> Response:
        # Static: what to save is in the address's fragment, and only a press of Save there saves it.
        return _answer(request, save_page)

    @router.get("/sw.js")
    async def service_worker(request: Request) -> Response:
        return _answer(request, worker)

    @router.get("/web/manifest.webmanifest")
    async def manifest(request: Request, settings: SettingsDep) -> Response:
        return _answer(request, manifests.get(settings.public_url))

    @router.get("/web/{path:path}")
    async def asset(path: str, request: Request) -> Response:
        found = assets.get(path)
        if found is None:
            raise HTTPException(404, "no such file")
        return _answer(request, found)

    return router
