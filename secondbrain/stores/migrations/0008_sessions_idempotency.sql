-- The web page's sign-in: a one-time link (printed by `secondbrain up` or `secondbrain open`) or a
-- pasted key is exchanged for a session, held by the browser in an HttpOnly cookie.  Both hang
-- off the key they were made from: revoking the key ends them.  Only hashes are stored.
CREATE TABLE login_links (
    token_hash  bytea PRIMARY KEY,
    key_id      text NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
    created_at  timestamptz NOT NULL DEFAULT now(),
    expires_at  timestamptz NOT NULL,
    used_at     timestamptz
);
CREATE INDEX login_links_key_idx ON login_links (key_id);

CREATE TABLE web_sessions (
    session_hash bytea PRIMARY KEY,
    key_id       text NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
    created_at   timestamptz NOT NULL DEFAULT now(),
    expires_at   timestamptz NOT NULL
);
CREATE INDEX web_sessions_key_idx ON web_sessions (key_id);

-- What a submission with an Idempotency-Key asked for, so the same key with another body is refused.
ALTER TABLE jobs ADD COLUMN request_hash text;
