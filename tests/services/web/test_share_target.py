"""The installed app's parts as the HTTP layer serves them: the manifest (with its share target), the icons,
the service worker and its shell, and ``POST /share`` turning a share into captures through the gateway's
own submission.  Real stores (Postgres, files); the browser side is in ``tests/e2e/test_web_share.py``."""

from __future__ import annotations

import io
import json
import re
from collections.abc import Iterator, Sequence
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from PIL import Image
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from devtools import gen_pdf_image
from secondbrain.settings import Settings
from services.ingest_gateway.share import split_share


@pytest.fixture()
def client(dsn: str, tmp_path: Path) -> Iterator[TestClient]:
    settings = Settings(  # type: ignore[call-arg]
        data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",
        topic_prefix=f"share{tmp_path.name[-6:]}.", auth="off",  # the session cookie is tried in the browser test
        fetch_allow_private=True,
    )
    rt = build_runtime(settings, vectors=False, models=False)
    with TestClient(create_app(rt, gateway=True, query=False, relay=None), base_url="http://localhost") as c:
        yield c
    rt.close()


def test_the_manifest_names_the_app_its_icons_and_the_share_target(client: TestClient) -> None:
    page = client.get("/").text
    (href,) = re.findall(r'<link rel="manifest" href="([^"]+)">', page)
    r = client.get(href)
    assert r.status_code == 200 and r.headers["content-type"].startswith("application/manifest+json")
    manifest = r.json()
    assert (manifest["name"], manifest["start_url"], manifest["scope"], manifest["display"]) == (
        "secondbrain", "/", "/", "standalone")
    assert re.fullmatch(r"#[0-9a-f]{6}", manifest["theme_color"]) and manifest["background_color"]
    sizes = {}
    for icon in manifest["icons"]:
        got = client.get(icon["src"])
        assert got.status_code == 200 and got.headers["content-type"] == icon["type"], icon
        if icon["type"] == "image/png":
            with Image.open(io.BytesIO(got.content)) as im:
                assert f"{im.width}x{im.height}" == icon["sizes"], icon
            sizes[icon["sizes"], icon.get("purpose", "any")] = icon["src"]
    assert {("192x192", "any"), ("512x512", "any"), ("512x512", "maskable")} <= set(sizes)
    share = manifest["share_target"]
    assert (share["action"], share["method"], share["enctype"]) == ("/share", "POST", "multipart/form-data")
    assert {k: share["params"][k] for k in ("title", "text", "url")} == {"title": "title", "text": "text", "url": "url"}
    (files,) = share["params"]["files"]
    # Whatever secondbrain reads can be shared to it: pictures, PDFs, recordings, text, Markdown, office files.
    assert files["name"] == "files" and {
        "image/*", "audio/*", "application/pdf", "text/plain", "text/markdown", ".md", ".txt", "text/csv",
        "application/vnd.openxmlformats-officedocument.wordprocessingml.document", ".docx", ".xlsx", ".pptx",
        "application/vnd.oasis.opendocument.text", "application/epub+zip"} <= set(files["accept"])
    assert all(a.startswith(".") or "/" in a for a in files["accept"])


def test_the_service_worker_keeps_only_the_page_s_own_files(client: TestClient) -> None:
    r = client.get("/sw.js")
    assert r.status_code == 200 and r.headers["content-type"].startswith("text/javascript")
    assert "script-src 'self'" in r.headers["content-security-policy"] and r.headers["cache-control"] == "no-cache"
    shell = json.loads(re.search(r"^const SHELL = (.*);$", r.text, re.M).group(1))  # type: ignore[union-attr]
    assert "/" in shell and "/web/app.js" in shell and "/web/manifest.webmanifest" in shell
    assert all(p == "/" or p.startswith("/web/") for p in shell)  # never /v1/, sources or raw files
    for path in shell:
        assert client.get(path).status_code == 200, path
    assert re.search(r'^const VERSION = "[0-9a-f]{16}";$', r.text, re.M)


def share(client: TestClient, fields: dict[str, str], files: Sequence[tuple[str, bytes, str]] = (),
          headers: dict[str, str] | None = None) -> list[str]:
    r = client.post("/share", data=fields, files=[("files", f) for f in files], headers=headers,
                    follow_redirects=False)
    assert r.status_code == 303, r.text
    location = r.headers["location"]
    assert location.startswith("/?shared=")
    return [j for j in location.removeprefix("/?shared=").split(",") if j]


def test_a_share_becomes_a_page_a_note_and_files(client: TestClient) -> None:
    photo = gen_pdf_image.encode(gen_pdf_image.text_image(gen_pdf_image.PHOTO_LINES), "PNG")
    pdf = gen_pdf_image.text_pdf()
    jobs = share(client, {"title": "Boiler quote", "text": "Dmitri quoted 340 euros for the boiler valve",
                          "url": "https://example.org/boilers"},
                 [("image.png", photo, "image/png"), ("quote.pdf", pdf, "application/pdf")])
    views = [client.get(f"/v1/jobs/{j}").json() for j in jobs]
    assert [v["source_uri"] for v in views][:1] == ["https://example.org/boilers"]
    assert views[0]["title"] == "Boiler quote"
    note, image, doc = views[1:]
    assert note["source_uri"].startswith("note:")
    assert image["title"] == "image.png" and doc["title"] == "quote.pdf"
    assert image["source_uri"].startswith("share:") and image["source_uri"] != doc["source_uri"]
    # Shared again (a resent form): the same page's job; the same bytes again (the pipeline ends them as
    # duplicates of the first).
    again = share(client, {"title": "Boiler quote", "text": "Dmitri quoted 340 euros for the boiler valve",
                           "url": "https://example.org/boilers"}, [("image.png", photo, "image/png")])
    assert again[0] == jobs[0]
    assert len(again) == 3 and set(again[1:]).isdisjoint(jobs)
    # Another picture with the same name is another source, not a new version of the first.
    another = gen_pdf_image.encode(gen_pdf_image.text_image(("ANOTHER",)), "PNG")
    other = share(client, {"title": ""}, [("image.png", another, "image/png")])
    assert client.get(f"/v1/jobs/{other[0]}").json()["source_uri"] != image["source_uri"]


def test_what_chrome_on_android_sends_a_link_in_the_text(client: TestClient) -> None:
    (job,) = share(client, {"title": "How lighthouses keep time", "text": "https://example.org/lighthouses"})
    view = client.get(f"/v1/jobs/{job}").json()
    assert (view["source_uri"], view["title"]) == ("https://example.org/lighthouses", "How lighthouses keep time")
    # Nothing came (an empty file field, as a form sends it): no capture, and the page says so.
    assert share(client, {"text": " "}, [("", b"", "application/octet-stream")]) == []


def test_a_share_is_refused_from_another_site_and_taken_from_the_share_sheet(client: TestClient) -> None:
    note = {"text": "Shared from the share sheet"}
    r = client.post("/share", data=note, headers={"Origin": "http://attacker.example"}, follow_redirects=False)
    assert r.status_code == 403 and "cross-site request refused" in r.json()["detail"]
    # A sandboxed frame elsewhere says null, but the browser says it is cross-site.
    r = client.post("/share", data=note, headers={"Origin": "null", "Sec-Fetch-Site": "cross-site"},
                    follow_redirects=False)
    assert r.status_code == 403
    # The phone's share sheet (the browser itself started it) and this page's own form (no referrer sent).
    assert len(share(client, note, headers={"Origin": "null", "Sec-Fetch-Site": "none"})) == 1
    own = {"Origin": "null", "Sec-Fetch-Site": "same-origin"}
    assert len(share(client, {"text": "From the page"}, headers=own)) == 1
    # Only the share target takes a null origin: the API's writes do not.
    r = client.post("/v1/notes", json=note, headers={"Origin": "null", "Sec-Fetch-Site": "none"})
    assert r.status_code == 403


def test_a_share_that_is_not_a_form_or_too_many_files_is_refused(client: TestClient) -> None:
    r = client.post("/share", json={"text": "x"}, follow_redirects=False)
    assert r.status_code == 415
    r = client.post("/share", data={"text": "x" * 300_000}, follow_redirects=False)
    assert r.status_code == 413
    many = [("files", (f"{i}.txt", f"file {i}".encode(), "text/plain")) for i in range(11)]
    r = client.post("/share", files=many, follow_redirects=False)
    assert r.status_code == 400 and "at most 10" in r.json()["detail"]


@pytest.mark.parametrize(("title", "text", "url", "expected"), [
    (None, "https://example.org/a", None, (None, None, "https://example.org/a")),
    ("Great read", "Great read https://example.org/a", None, ("Great read", None, "https://example.org/a")),
    ("T", "Look: https://example.org/a.", None, ("T", "Look: https://example.org/a.", "https://example.org/a")),
    ("T", "some words", "https://example.org/x", ("T", "some words\n\nhttps://example.org/x", "https://example.org/x")),
    (None, None, "content://media/1", (None, "content://media/1", None)),
    (None, "two https://x.org and https://y.org", None, (None, "two https://x.org and https://y.org", None)),
])
def test_what_a_share_holds(title: str | None, text: str | None, url: str | None,
                            expected: tuple[str | None, str | None, str | None]) -> None:
    got = split_share(title, text, url)
    assert (got.title, got.text, got.url) == expected
