-- The answer endpoint an administrator set at run time (GET/PUT/DELETE /v1/settings/answers): one
-- row for the whole server, overriding SB_LLM_BASE_URL until it is cleared.  The API key is read by
-- the query service only; the API never sends it back.
CREATE TABLE answer_endpoint (
    singleton   boolean PRIMARY KEY DEFAULT true CHECK (singleton),
    base_url    text NOT NULL,
    model       text NOT NULL,
    api_key     text,
    updated_at  timestamptz NOT NULL DEFAULT now()
);
