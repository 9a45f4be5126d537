-- Vector index versions per user: which collection version (v<version>) is searched, with
-- which embedding model, and the re-embedding of a user's chunks into a new version.
--
-- status: 'active' (searched and written), 'building' (written by the embedder while a
-- re-index fills it from the active one), 'retired' (replaced; dropped_at once its collection
-- is deleted).  A re-index holds a lease (lease_owner until lease_expires_at) so only one
-- process fills an index at a time, and records where it is (points_done, resume_from) so
-- another run continues instead of starting over.

CREATE TABLE vector_indexes (
    user_id          text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    version          integer NOT NULL CHECK (version > 0),
    model            text NOT NULL,
    model_id         text NOT NULL,
    dense_size       integer NOT NULL CHECK (dense_size > 0),
    status           text NOT NULL CHECK (status IN ('building', 'active', 'retired')),
    keep_old         boolean NOT NULL DEFAULT false,
    created_at       timestamptz NOT NULL DEFAULT now(),
    activated_at     timestamptz,
    retired_at       timestamptz,
    dropped_at       timestamptz,
    points_total     bigint,
    points_done      bigint NOT NULL DEFAULT 0,
    resume_from      text,
    lease_owner      text,
    lease_expires_at timestamptz,
    PRIMARY KEY (user_id, version)
);
CREATE UNIQUE INDEX vector_indexes_one_active ON vector_indexes (user_id) WHERE status = 'active';
CREATE UNIQUE INDEX vector_indexes_one_building ON vector_indexes (user_id) WHERE status = 'building';

-- Until now every user's vectors were in collection v1, embedded with the packaged MiniLM.
INSERT INTO vector_indexes (user_id, version, model, model_id, dense_size, status, activated_at)
SELECT DISTINCT d.user_id, 1, 'minilm-int8', 'all-MiniLM-L6-v2-int8', 384, 'active', now()
FROM documents d JOIN users u ON u.user_id = d.user_id
WHERE d.chunk_count > 0;
