"""Contract of the Catalog's tags: a list per source, counted per user, filtered on, kept across versions,
removed with their source and their user; and a title changed on the current version."""

from __future__ import annotations

from secondbrain import ids
from tests.contracts.metadata.helpers import Stores, ingest, version_of


def test_tags_belong_to_a_users_sources_and_are_counted(stores: Stores) -> None:
    c = stores.catalog
    plan, seeds = (version_of("alice", f"file:///{n}.md", f"{n} text") for n in ("plan", "seeds"))
    for art in (plan, seeds):
        ingest(stores, art)
    bobs = version_of("bob", "file:///plan.md", "bob text")
    ingest(stores, bobs)
    c.set_source_tags("alice", plan.source_id, ["garden", "work"])
    assert c.tag_sources("alice", "garden", [plan.source_id, seeds.source_id, bobs.source_id], add=True) == 1
    assert c.source_tags("alice", [plan.source_id, seeds.source_id, bobs.source_id]) == {
        plan.source_id: ["garden", "work"], seeds.source_id: ["garden"]}
    assert c.tag_counts("alice") == [("garden", 2), ("work", 1)]
    assert c.tag_counts("bob") == [] and c.source_tags("bob", [bobs.source_id]) == {}
    assert c.sources_tagged("alice", ["garden"]) == sorted([plan.source_id, seeds.source_id])
    assert c.sources_tagged("alice", ["garden", "work"]) == [plan.source_id]
    assert c.sources_tagged("bob", ["garden"]) == []
    listed = c.list_sources("alice", tags=["work"])
    assert {r.source_id for r in listed} == {plan.source_id}
    assert c.list_sources("alice", tags=["nothing"]) == []
    assert c.known_sources("alice", [plan.source_id, bobs.source_id, "nope"]) == [plan.source_id]

    assert c.tag_sources("alice", "garden", [plan.source_id, seeds.source_id], add=False) == 2
    assert c.tag_counts("alice") == [("work", 1)]
    c.set_source_tags("alice", plan.source_id, [])
    assert c.tag_counts("alice") == [] and c.source_tags("alice", [plan.source_id]) == {}


def test_tags_outlive_a_new_version_and_go_with_their_source_and_user(stores: Stores) -> None:
    c = stores.catalog
    first = version_of("alice", "file:///plan.md", "first words")
    ingest(stores, first)
    c.set_source_tags("alice", first.source_id, ["garden"])
    ingest(stores, version_of("alice", "file:///plan.md", "second words"))
    assert c.source_tags("alice", [first.source_id]) == {first.source_id: ["garden"]}
    assert stores.lifecycle.delete_source("alice", first.source_id) is not None
    assert c.tag_counts("alice") == []

    other = version_of("alice", "file:///other.md", "other words")
    ingest(stores, other)
    c.set_source_tags("alice", other.source_id, ["kept", "until-erased"])
    assert stores.lifecycle.erase_user("alice")["source_tags"] == 2
    assert c.tag_counts("alice") == []


def test_a_title_changes_on_the_current_version_only(stores: Stores) -> None:
    c = stores.catalog
    old = version_of("alice", "file:///plan.md", "first words")
    ingest(stores, old)
    new = version_of("alice", "file:///plan.md", "second words")
    ingest(stores, new)
    new_doc = ids.document_id(new.artifact_id)
    c.supersede_older("alice", new.source_id, new_doc)
    assert c.retitle_source("alice", new.source_id, "Garden plan")
    titles = {r.version: r.title for r in c.list_sources("alice", source_id=new.source_id)}
    assert titles == {2: "Garden plan", 1: "Doc"}
    assert not c.retitle_source("bob", new.source_id, "Bob's now")
    assert not c.retitle_source("alice", ids.source_id("alice", "file:///none.md"), "Nothing")
