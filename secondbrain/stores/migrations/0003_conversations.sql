-- Conversations: follow-up questions are understood with the turns before them.

CREATE TABLE conversations (
    conversation_id text PRIMARY KEY,
    user_id         text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    created_at      timestamptz NOT NULL DEFAULT now(),
    updated_at      timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX conversations_user_idx ON conversations (user_id, updated_at DESC);

CREATE TABLE conversation_turns (
    id              bigserial PRIMARY KEY,
    conversation_id text NOT NULL REFERENCES conversations (conversation_id) ON DELETE CASCADE,
    role            text NOT NULL CHECK (role IN ('user', 'assistant')),
    content         text NOT NULL,
    meta            jsonb NOT NULL DEFAULT '{}'::jsonb,
    created_at      timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX conversation_turns_idx ON conversation_turns (conversation_id, id);

-- Time-scoped listing ("what did I save yesterday?") and the timeline read documents by time.
CREATE INDEX documents_user_captured_idx ON documents (user_id, captured_at DESC);
