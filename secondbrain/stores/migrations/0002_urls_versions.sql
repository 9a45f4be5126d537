-- URL jobs exist before their artifact (the fetcher creates it), and sources keep versions.

-- A job for a URL has no artifact until the page is fetched; it remembers what was asked.
ALTER TABLE jobs ALTER COLUMN artifact_id DROP NOT NULL;
ALTER TABLE jobs ADD COLUMN source_uri text;
ALTER TABLE jobs ADD COLUMN title text;

-- New content for the same source is a new version; older versions are superseded (their
-- chunks leave the vector index once the new version is indexed).
ALTER TABLE documents ADD COLUMN version integer NOT NULL DEFAULT 1 CHECK (version >= 1);
ALTER TABLE documents ADD COLUMN superseded_at timestamptz;
CREATE INDEX documents_user_source_idx ON documents (user_id, source_id, version DESC);
