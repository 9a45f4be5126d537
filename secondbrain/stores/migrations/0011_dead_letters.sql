-- Events the pipeline refused or could not process, kept for their producers to read
-- (GET /v1/deadletters).  No foreign key to users: a refusal may name a user that does not exist.
CREATE TABLE dead_letters (
    id            bigserial PRIMARY KEY,
    letter_id     text NOT NULL UNIQUE,
    failed_at     timestamptz NOT NULL DEFAULT now(),
    stage         text NOT NULL,
    topic         text NOT NULL,
    partition     integer NOT NULL,
    "offset"      bigint NOT NULL,
    error_kind    text NOT NULL,
    error_message text NOT NULL,
    event_id      text,
    user_id       text,
    key_id        text,
    job_id        text,
    producer      text
);
CREATE INDEX dead_letters_user_idx ON dead_letters (user_id, id);
CREATE INDEX dead_letters_key_idx ON dead_letters (key_id, id);
