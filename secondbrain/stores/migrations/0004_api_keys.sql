-- API keys: a bearer key names its user.  Only a hash of each key is kept.

CREATE TABLE api_keys (
    key_id       text PRIMARY KEY,
    user_id      text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    name         text NOT NULL,
    secret_hash  bytea NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    last_used_at timestamptz,
    revoked_at   timestamptz
);
CREATE INDEX api_keys_user_idx ON api_keys (user_id, created_at DESC);
