-- Data lifecycle: deleting a source, erasing a user, expiring raw files.

-- Which source each job belongs to (the name it was submitted under: a file name, a URL, a
-- note), so the versions and the duplicates of a source are found without decoding events.
-- Rows from before this migration fall back to their artifact's source.
ALTER TABLE jobs ADD COLUMN source_id text;
UPDATE jobs j SET source_id = a.source_id FROM artifacts a
WHERE a.artifact_id = j.artifact_id AND j.source_id IS NULL;
CREATE INDEX jobs_user_source_idx ON jobs (user_id, source_id);

-- A deleted source leaves a tombstone: work still in flight for it (an event already in Kafka,
-- a stage halfway through) is dropped instead of bringing it back.  A later submission under
-- the same name is new work and runs normally.  The arrays keep what is still to remove outside
-- Postgres (vector points, objects) until cleaned_at is set, so an interrupted deletion is
-- finished by asking again; requeue_job_ids are duplicates of the deleted content submitted
-- under another name, indexed again in their own name once the cleanup is done.
CREATE TABLE deleted_sources (
    user_id         text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    source_id       text NOT NULL,
    deleted_at      timestamptz NOT NULL DEFAULT clock_timestamp(),
    job_ids         text[] NOT NULL DEFAULT '{}',
    document_ids    text[] NOT NULL DEFAULT '{}',
    object_keys     text[] NOT NULL DEFAULT '{}',
    requeue_job_ids text[] NOT NULL DEFAULT '{}',
    cleaned_at      timestamptz,
    PRIMARY KEY (user_id, source_id)
);

-- Raw-file retention: the bytes of finished jobs older than SB_RAW_RETENTION_DAYS are removed;
-- the index stays searchable and the artifact records when its raw file expired.
ALTER TABLE artifacts ADD COLUMN raw_purged_at timestamptz;
CREATE INDEX artifacts_raw_kept_idx ON artifacts (submitted_at) WHERE raw_purged_at IS NULL;
