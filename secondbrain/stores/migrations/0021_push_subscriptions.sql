-- Web push subscriptions: each browser a person turned reminders on in ("Turn on reminders on this device") keeps its
-- push service endpoint and the keys a reminder is encrypted to; `up` sends each due reminder to every one of them.
CREATE TABLE push_subscriptions (
    subscription_id text PRIMARY KEY,
    user_id         text NOT NULL REFERENCES users (user_id) ON DELETE CASCADE,
    endpoint        text NOT NULL,
    p256dh          text NOT NULL,
    auth            text NOT NULL,
    created_at      timestamptz NOT NULL DEFAULT now(),
    UNIQUE (user_id, endpoint)
);
