-- Key scopes and per-user request limits.
--
-- scope: 'user' keys use the HTTP API as their user; 'admin' keys may also manage users and
-- keys; 'producer' keys only sign events that other apps publish straight to Kafka.

ALTER TABLE api_keys ADD COLUMN scope text NOT NULL DEFAULT 'user'
    CHECK (scope IN ('user', 'admin', 'producer'));

-- Fixed one-window counters shared by every gateway/query replica (rows are short-lived).
CREATE TABLE request_windows (
    user_id      text NOT NULL,
    bucket       text NOT NULL,
    window_start timestamptz NOT NULL,
    hits         integer NOT NULL,
    PRIMARY KEY (user_id, bucket, window_start)
);
