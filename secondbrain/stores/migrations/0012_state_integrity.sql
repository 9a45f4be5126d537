-- State that stays right while work is in flight.

-- A job whose source got a newer submission before it finished ends as 'superseded': it stops
-- (its stages still to run are skipped), frees its pending slot and is not resumed at start-up.
ALTER TABLE jobs DROP CONSTRAINT IF EXISTS jobs_status_check;
ALTER TABLE jobs ADD CONSTRAINT jobs_status_check
    CHECK (status IN ('queued', 'running', 'succeeded', 'failed', 'duplicate', 'superseded'));
ALTER TABLE jobs ADD COLUMN superseded_by text;
-- Finding the unfinished jobs of a source (what a new submission supersedes).
CREATE INDEX jobs_unfinished_source_idx ON jobs (user_id, source_id) WHERE status IN ('queued', 'running');

-- An erased user id is remembered: nothing is created for it again by work that was in flight
-- (a submission, a dead letter), until an administrator creates the user again (it starts empty).
CREATE TABLE erased_users (
    user_id   text PRIMARY KEY,
    erased_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
