-- Calendar feeds: a read-only capability URL for the agenda (GET /v1/agenda.ics?token=...), made, listed and
-- revoked like API keys.  Only a hash of each token is kept; the zone is the one the feed's times are read in.
CREATE TABLE feed_tokens (
    feed_id      text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    name         text NOT NULL,
    secret_hash  bytea NOT NULL UNIQUE,
    timezone     text NOT NULL,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX feed_tokens_user_idx ON feed_tokens (user_id, created_at DESC);
