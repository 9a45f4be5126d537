-- Tags: what a person files a source under (a list of short names per source, see secondbrain.tags).  They
-- belong to the source, not to one version of it: editing the text keeps them.  Rows go with their user; a
-- deleted source's rows are removed with it (secondbrain.stores.postgres.lifecycle).
CREATE TABLE source_tags (
    user_id   text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    source_id text NOT NULL,
    tag       text NOT NULL CHECK (tag <> '' AND length(tag) <= 64),
    added_at  timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (user_id, source_id, tag)
);
CREATE INDEX source_tags_tag_idx ON source_tags (user_id, tag);
