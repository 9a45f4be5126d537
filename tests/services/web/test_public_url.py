"""SB_PUBLIC_URL: the https address a reverse proxy (Caddy) or Tailscale Serve gives the server.  The proxy
speaks plain http to it on loopback and passes the public name on in ``Host``; the page's requests come with
the public origin.  So that name and origin are the server's own, while any other site is still refused; and
the links it makes (a sign-in link, a calendar feed and its events) and the installed app's start address use
the public address.  Real stores (Postgres, files)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.settings import Settings

PUBLIC = "https://brain.tail1234.ts.net"


@pytest.fixture()
def settings(dsn: str, tmp_path: Path) -> Settings:
    return Settings(data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",  # type: ignore[call-arg]
                    topic_prefix=f"pub{tmp_path.name[-6:]}.", public_url=PUBLIC + "/")


@pytest.fixture()
def client(settings: Settings) -> Iterator[tuple[TestClient, str]]:
    rt = build_runtime(settings, vectors=True, models=True)  # the calendar feed is the query service's
    rt.metadata.users.ensure_user("local")
    _info, key = rt.metadata.api_keys.create_api_key("local", "test", "admin")
    app = create_app(rt, gateway=True, query=True, relay=None)
    # As the proxy forwards it: plain http to loopback, the public name in Host.
    with TestClient(app, base_url="http://brain.tail1234.ts.net") as c:
        yield c, key
    rt.close()


def test_the_setting_takes_an_address_and_nothing_else(settings: Settings) -> None:
    assert settings.public_url == PUBLIC  # the trailing slash is dropped
    assert settings.host_names == ["brain.tail1234.ts.net"] and settings.own_origins == [PUBLIC]
    for bad in ("brain.example.org", "ftp://brain.example.org", "https://brain.example.org/secondbrain",
                "https://user@brain.example.org", "https://brain.example.org:99999"):
        with pytest.raises(ValueError, match="public_url must be an address such as"):
            Settings(public_url=bad)  # type: ignore[call-arg]
    assert Settings(public_url=" ").public_url is None  # type: ignore[call-arg]


def test_the_public_name_and_origin_are_the_servers_own(client: tuple[TestClient, str]) -> None:
    c, key = client
    auth = {"Authorization": f"Bearer {key}"}
    assert c.get("/v1/me", headers=auth).status_code == 200  # the name passes the Host allowlist
    own = c.post("/v1/notes", json={"text": "From the phone"}, headers={**auth, "Origin": PUBLIC})
    assert own.status_code == 202, own.text
    other = c.post("/v1/notes", json={"text": "x"}, headers={**auth, "Origin": "https://attacker.example"})
    assert other.status_code == 403 and "cross-site request refused" in other.json()["detail"]
    assert c.get("/", headers={"Host": "rebind.attacker.example"}).status_code == 400


def test_links_and_the_installed_app_use_the_public_address(client: tuple[TestClient, str]) -> None:
    c, key = client
    auth = {"Authorization": f"Bearer {key}"}
    link = c.post("/v1/login-links", headers=auth).json()
    assert link["public_url"] == f"{PUBLIC}/?token={link['token']}" and link["path"] == f"/?token={link['token']}"
    feed = c.post("/v1/feeds", json={"name": "phone"}, headers=auth).json()
    assert feed["url"] == f"{PUBLIC}/v1/agenda.ics?token={feed['token']}"
    manifest = c.get("/web/manifest.webmanifest").json()
    assert manifest["start_url"] == manifest["scope"] == manifest["id"] == f"{PUBLIC}/"
    assert manifest["share_target"]["action"] == f"{PUBLIC}/share"
