-- Initial schema of the metadata store.
-- Ids are UUID strings kept as text: they are produced by secondbrain.ids and compared
-- verbatim everywhere (Kafka keys, payloads, URLs), so text avoids casts at every edge.

CREATE TABLE users (
    user_id      text PRIMARY KEY,
    display_name text,
    created_at   timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE artifacts (
    artifact_id  text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    source_id    text NOT NULL,
    source_uri   text NOT NULL,
    object_key   text NOT NULL,
    content_type text NOT NULL,
    size_bytes   bigint NOT NULL CHECK (size_bytes >= 0),
    sha256       text NOT NULL,
    filename     text,
    title        text,
    captured_at  timestamptz,
    submitted_at timestamptz NOT NULL,
    producer     text NOT NULL,
    attributes   jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX artifacts_user_submitted_idx ON artifacts (user_id, submitted_at DESC);
CREATE INDEX artifacts_user_source_idx ON artifacts (user_id, source_id);

CREATE TABLE jobs (
    job_id       text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    artifact_id  text NOT NULL REFERENCES artifacts (artifact_id) ON DELETE CASCADE,
    status       text NOT NULL DEFAULT 'queued'
                 CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'duplicate')),
    error        text,
    duplicate_of text,
    created_at   timestamptz NOT NULL DEFAULT now(),
    updated_at   timestamptz NOT NULL DEFAULT now(),
    finished_at  timestamptz
);
CREATE INDEX jobs_user_created_idx ON jobs (user_id, created_at DESC, job_id DESC);
CREATE INDEX jobs_artifact_idx ON jobs (artifact_id);
-- requeue_unfinished scans only the few jobs still in flight.
CREATE INDEX jobs_unfinished_idx ON jobs (job_id) WHERE status IN ('queued', 'running');

CREATE TABLE job_stages (
    job_id      text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    stage       text NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'succeeded', 'failed', 'retrying', 'skipped')),
    attempts    integer NOT NULL DEFAULT 0,
    started_at  timestamptz,
    finished_at timestamptz,
    detail      text,
    PRIMARY KEY (job_id, stage)
);

CREATE TABLE job_events (
    id      bigserial PRIMARY KEY,
    job_id  text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    stage   text,
    status  text NOT NULL,
    detail  text,
    attempt integer,
    -- clock_timestamp, not now(): several events written in one transaction stay distinct.
    at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX job_events_job_idx ON job_events (job_id, id);

CREATE TABLE documents (
    document_id        text PRIMARY KEY,
    user_id            text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    artifact_id        text NOT NULL REFERENCES artifacts (artifact_id) ON DELETE CASCADE,
    source_id          text NOT NULL,
    title              text NOT NULL,
    modality           text NOT NULL,
    content_type       text NOT NULL,
    captured_at        timestamptz NOT NULL,
    captured_at_source text NOT NULL,
    ingested_at        timestamptz NOT NULL,
    char_count         integer NOT NULL CHECK (char_count >= 0),
    chunk_count        integer CHECK (chunk_count >= 0),
    metadata           jsonb NOT NULL DEFAULT '{}'::jsonb
);
CREATE INDEX documents_user_idx ON documents (user_id, ingested_at DESC);
CREATE INDEX documents_artifact_idx ON documents (artifact_id);

-- Transactional outbox: rows written with the job, published to Kafka by the relay.
-- headers is a JSON list of [name, base64(value)] pairs (order and repeats preserved).
CREATE TABLE outbox (
    id           bigserial PRIMARY KEY,
    topic        text NOT NULL CHECK (length(topic) > 0),
    key          bytea NOT NULL,
    value        bytea NOT NULL,
    headers      jsonb NOT NULL DEFAULT '[]'::jsonb CHECK (jsonb_typeof(headers) = 'array'),
    created_at   timestamptz NOT NULL DEFAULT now(),
    published_at timestamptz,
    lease_until  timestamptz,
    attempts     integer NOT NULL DEFAULT 0,
    last_error   text,
    -- No foreign key: the outbox is a transport log and must not block job housekeeping.
    job_id       text
);
CREATE INDEX outbox_unpublished_idx ON outbox (id) WHERE published_at IS NULL;
CREATE INDEX outbox_job_idx ON outbox (job_id) WHERE job_id IS NOT NULL;
