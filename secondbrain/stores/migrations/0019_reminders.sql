-- Reminders of agenda lines: "remind me" on a line of the agenda keeps what it is about and when to remind;
-- `up` sends each one once it is due (by e-mail through the SMTP server the person configures) and notes when.
CREATE TABLE reminders (
    reminder_id text PRIMARY KEY,
    user_id     text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    event_id    text NOT NULL,
    title       text NOT NULL,
    kind        text NOT NULL,
    starts_at   timestamptz NOT NULL,
    remind_at   timestamptz NOT NULL,
    timezone    text NOT NULL,
    created_at  timestamptz NOT NULL DEFAULT now(),
    sent_at     timestamptz,
    UNIQUE (user_id, event_id)
);
CREATE INDEX reminders_due_idx ON reminders (remind_at) WHERE sent_at IS NULL;
