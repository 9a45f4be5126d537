"""Editing a source in place and tagging sources, over HTTP on real stores with the pipeline run in process:
an edit is a new version (indexed again, the old one in the history), a past answer shows that its source
changed since, stale edits and text that is not the source's own are refused, and tags filter sources,
search and asking."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from fastapi.testclient import TestClient
from pydantic import SecretStr

from app.assembly import build_runtime
from app.http import create_app
from secondbrain.events.codec import EventCodec
from secondbrain.events.models import ArtifactSubmitted
from secondbrain.pipeline import core
from secondbrain.runtime import Runtime
from secondbrain.settings import Settings
from services.chunker.logic import ChunkingConfig
from services.chunker.stage import ChunkerStage
from services.embedder.stage import EmbedderStage
from services.extractors.html import HtmlExtractor
from services.extractors.registry import ExtractorSet
from services.extractors.stage import ExtractorStage
from services.extractors.text import TextExtractor
from tests.pg import base_dsn, fresh_database
from tests.sse import sse_events

MEMO = "The new sofa weighs him outdated pounds, so two people can carry it up the stairs."
FIXED = "The new sofa weighs about eighty pounds, so two people can carry it up the stairs."


class Pipeline:
    """The three stages, run on whatever the gateway queued."""

    def __init__(self, rt: Runtime) -> None:
        m = rt.metadata
        self.rt = rt
        self.extract = ExtractorStage(rt.objects, users=m.users, api_keys=m.api_keys, intake=m.intake, jobs=m.jobs,
                                      fence=m.fence, catalog=m.catalog, lifecycle=m.lifecycle,
                                      extractors=ExtractorSet({"text": TextExtractor(), "html": HtmlExtractor()}),
                                      max_bytes=1 << 20)
        self.chunk = ChunkerStage(rt.objects, ChunkingConfig(), fence=m.fence)
        assert rt.vectors and rt.embedder and rt.sparse
        self.embed = EmbedderStage(rt.objects, catalog=m.catalog, indexes=m.indexes, fence=m.fence,
                                   vectors=rt.vectors, embedder=rt.embedder, sparse=rt.sparse)
        self.codec = EventCodec()

    def drain(self) -> None:
        m = self.rt.metadata
        rows = m.outbox.claim_outbox(100)
        for row in rows:
            if row.message.topic.endswith("artifacts.submitted"):
                ev = self.codec.decode(row.message.value, expected=ArtifactSubmitted)
                for doc in core.run(self.extract, ev, m.jobs, trusted=True):
                    for chunks in core.run(self.chunk, doc, m.jobs):
                        core.run(self.embed, chunks, m.jobs)
        m.outbox.mark_published([r.id for r in rows])


@pytest.fixture()
def served(tmp_path: Path) -> Iterator[tuple[TestClient, Pipeline]]:
    with base_dsn() as base, fresh_database(base) as dsn:  # each test its own: tags are counted per user
        settings = Settings(  # type: ignore[call-arg]
            data_dir=tmp_path, postgres_dsn=SecretStr(dsn), kafka_bootstrap="127.0.0.1:9",
            topic_prefix=f"ed{tmp_path.name[-6:]}.", auth="off")  # keys and other users: tests/e2e/test_isolation.py
        rt = build_runtime(settings, vectors=True, models=True)
        with TestClient(create_app(rt, gateway=True, query=True, relay=None), base_url="http://localhost") as client:
            yield client, Pipeline(rt)
        rt.close()


def add_note(client: TestClient, pipeline: Pipeline, text: str, title: str) -> str:
    job = client.post("/v1/notes", json={"text": text, "title": title}).json()["job_id"]
    pipeline.drain()
    assert client.get(f"/v1/jobs/{job}").json()["status"] == "succeeded"
    return str(next(s["source_id"] for s in client.get("/v1/sources").json()["sources"] if s["job_id"] == job))


def texts(client: TestClient, q: str, **params: Any) -> list[str]:
    return [h["text"] for h in client.get("/v1/search", params={"q": q, **params}).json()["hits"]]


def test_an_edit_is_a_new_version_indexed_again_and_a_past_answer_says_so(
        served: tuple[TestClient, Pipeline]) -> None:
    client, pipeline = served
    source = add_note(client, pipeline, MEMO, "Sofa")
    first = client.get(f"/v1/sources/{source}").json()
    assert first["current_version"] == 1
    # An answer that quoted the mistranscribed words (as POST /v1/ask keeps it).
    hit = client.get("/v1/search", params={"q": "sofa pounds"}).json()["hits"][0]
    metadata = pipeline.rt.metadata
    metadata.conversations.add_turn("local", "c-sofa", "user", "How heavy is the sofa?")
    metadata.conversations.add_turn("local", "c-sofa", "assistant", "It weighs him outdated pounds [1].",
                                    meta={"sources": [{"n": 1, "document_id": hit["document_id"],
                                                       "source_id": source, "title": "Sofa"}]})
    before = client.get("/v1/conversations/c-sofa").json()["turns"][0]["sources"][0]
    assert "edited_since" not in before

    edited = client.patch(f"/v1/sources/{source}", json={"text": FIXED}, headers={"If-Match": '"1"'})
    assert edited.status_code == 202, edited.text
    assert edited.json()["edited_version"] == 1
    pipeline.drain()
    assert client.get(edited.json()["status_url"]).json()["status"] == "succeeded"

    now = client.get(f"/v1/sources/{source}").json()
    assert now["current_version"] == 2 and now["title"] == "Sofa"
    assert [(v["version"], v["superseded"]) for v in now["versions"]] == [(2, False), (1, True)]
    old = now["versions"][1]
    assert client.get(old["raw_url"]).text == MEMO  # the earlier words stay readable in the history
    found = texts(client, "sofa pounds")
    assert any("about eighty pounds" in t for t in found) and not any("outdated" in t for t in found)

    mark = client.get("/v1/conversations/c-sofa").json()["turns"][0]["sources"][0]["edited_since"]
    assert mark == {"quoted_version": 1, "current_version": 2, "quoted_url": old["raw_url"],
                    "history_url": f"/v1/sources/{source}"}

    # An edit made on the version before is stale now.
    stale = client.patch(f"/v1/sources/{source}", json={"text": "Something else."}, headers={"If-Match": '"1"'})
    assert stale.status_code == 412 and "now at version 2" in stale.json()["detail"]
    # ... and so is one made while another edit is still being taken in.
    assert client.patch(f"/v1/sources/{source}", json={"text": FIXED + " Mind the door frame."},
                        headers={"If-Match": '"2"'}).status_code == 202
    racing = client.patch(f"/v1/sources/{source}", json={"text": "Other words."}, headers={"If-Match": '"2"'})
    assert racing.status_code == 412 and "still being taken in" in racing.json()["detail"]
    pipeline.drain()
    assert client.get(f"/v1/sources/{source}").json()["current_version"] == 3


def test_a_title_or_tags_change_at_once_and_the_words_of_a_page_cannot_be_edited(
        served: tuple[TestClient, Pipeline]) -> None:
    client, pipeline = served
    source = add_note(client, pipeline, "Plant the tomatoes by the south wall in May.", "Tomatoes")
    r = client.patch(f"/v1/sources/{source}", json={"title": "Tomato plan", "tags": ["Garden", "#spring"]})
    assert r.status_code == 200, r.text
    assert (r.json()["title"], r.json()["tags"], r.json()["current_version"]) == (
        "Tomato plan", ["garden", "spring"], 1)
    assert next(s for s in client.get("/v1/sources").json()["sources"]
                if s["source_id"] == source)["title"] == "Tomato plan"
    # the next version of its words keeps the new title and the tags
    assert client.patch(f"/v1/sources/{source}", json={"text": "Plant the tomatoes in June."}).status_code == 202
    pipeline.drain()
    now = client.get(f"/v1/sources/{source}").json()
    assert (now["title"], now["tags"], now["current_version"]) == ("Tomato plan", ["garden", "spring"], 2)

    page = client.post("/v1/artifacts", files={"file": ("shed.html", b"<html><head><title>Shed</title></head>"
                                                         b"<body><p>The shed key hangs by the door.</p></body></html>",
                                                         "text/html")}).json()["job_id"]
    pipeline.drain()
    page_source = next(s["source_id"] for s in client.get("/v1/sources").json()["sources"] if s["job_id"] == page)
    refused = client.patch(f"/v1/sources/{page_source}", json={"text": "Other words."})
    assert refused.status_code == 409 and "cannot be edited" in refused.json()["detail"]
    assert "text/html" in refused.json()["detail"]
    assert client.patch(f"/v1/sources/{page_source}", json={"title": "Garden shed"}).status_code == 200

    assert client.patch(f"/v1/sources/{source}", json={}).status_code == 422
    assert client.patch(f"/v1/sources/{source}", json={"tags": ["!!!"]}).status_code == 422
    assert client.patch("/v1/sources/no-such-source", json={"title": "x"}).status_code == 404


def test_tags_list_filter_and_change_on_several_sources(served: tuple[TestClient, Pipeline]) -> None:
    client, pipeline = served
    seeds = add_note(client, pipeline, "---\ntags: [garden, seeds]\n---\nOrder the heirloom bean seeds.", "Beans")
    lock = add_note(client, pipeline, "The bike lock code is 4-7-1-9.", "Bike lock")
    shed = add_note(client, pipeline, "The shed roof needs new felt before winter.", "Shed")
    # A note's front-matter tags are its tags (as imported notes bring them), not only words in its text.
    assert client.get(f"/v1/sources/{seeds}").json()["tags"] == ["garden", "seeds"]
    # So are the tags an import names beside the text (another secondbrain's export does).
    manifest = {"format": "secondbrain", "captures": [
        {"source_uri": "import:secondbrain:note:attic", "kind": "note", "title": "Attic", "part": "p0",
         "content_type": "text/markdown", "attributes": {"kind": "note", "import.tags": "house storage"}}]}
    sent = client.post("/v1/imports/batch", data={"manifest": json.dumps(manifest)},
                       files={"p0": ("attic.md", b"The attic holds the winter tyres.", "text/markdown")})
    assert sent.status_code == 200, sent.text
    pipeline.drain()
    attic = next(s for s in client.get("/v1/sources").json()["sources"] if s["title"] == "Attic")
    assert attic["tags"] == ["house", "storage"]
    assert client.delete(f"/v1/sources/{attic['source_id']}").status_code == 204

    added = client.post("/v1/tags/Garden/sources", json={"source_ids": [shed, seeds]})
    assert added.status_code == 200 and added.json() == {"tag": "garden", "source_ids": sorted([seeds, shed]),
                                                         "changed": 1}
    assert client.get("/v1/tags").json()["tags"] == [{"tag": "garden", "sources": 2}, {"tag": "seeds", "sources": 1}]
    listed = {s["source_id"]: s["tags"] for s in client.get("/v1/sources", params={"tags": "garden"}).json()["sources"]}
    assert listed == {seeds: ["garden", "seeds"], shed: ["garden"]}
    assert [s["source_id"] for s in client.get("/v1/sources", params=[("tags", "garden"), ("tags", "seeds")])
            .json()["sources"]] == [seeds]

    # Search keeps to the tagged sources, with tags= or with tag: in the words.
    assert not any("4-7-1-9" in t for t in texts(client, "code roof seeds", tags="garden"))
    assert any("felt" in t for t in texts(client, "roof tag:garden"))
    roof = client.get("/v1/search", params={"q": "roof tag:garden"}).json()
    assert roof["tags"] == ["garden"] and {tuple(h["tags"]) for h in roof["hits"]} <= {("garden",), ("garden", "seeds")}
    # Nothing tagged garden is about a bike lock: no match, and the closest shown are garden sources only.
    bike = client.get("/v1/search", params={"q": "bike lock code tag:garden"}).json()
    assert bike["matched"] is False and bike["closest"], bike
    assert not any("4-7-1-9" in h["text"] for h in [*bike["hits"], *bike["closest"]])
    assert all("garden" in h["tags"] for h in bike["closest"]), bike["closest"]
    assert client.get("/v1/search", params={"q": "lock tag:nothing"}).json()["hits"] == []
    # Asking too: the passages an answer may use come from the tagged sources only.
    for question, tags, allowed in (("What does the shed roof need? tag:garden", None, {seeds, shed}),
                                    ("What is the bike lock code?", ["garden"], {seeds, shed}),
                                    ("What is the bike lock code?", ["nothing"], set())):
        events = sse_events(client, "POST", "/v1/ask",  # type: ignore[arg-type]  # an httpx.Client at run time
                            json={"question": question, "tags": tags, "keep": False})
        used = {src["source_id"] for name, data in events if name == "sources" for src in data}
        assert used <= allowed and (used or not allowed), (question, tags, used)

    # A source that is not there refuses the whole change.
    missing = client.post("/v1/tags/garden/sources", json={"source_ids": [lock, "no-such-source"]})
    assert missing.status_code == 404 and "no-such-source" in missing.json()["detail"]
    assert client.get(f"/v1/sources/{lock}").json()["tags"] == []

    removed = client.request("DELETE", "/v1/tags/garden/sources", json={"source_ids": [seeds, shed, lock]})
    assert removed.status_code == 200 and removed.json()["changed"] == 2
    assert client.get("/v1/tags").json()["tags"] == [{"tag": "seeds", "sources": 1}]
    assert client.delete(f"/v1/sources/{seeds}").status_code == 204
    assert client.get("/v1/tags").json()["tags"] == []
