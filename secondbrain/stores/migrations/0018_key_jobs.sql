-- Which capture key made which job: a capture key (a browser extension's) follows only the jobs it made
-- itself (GET /v1/jobs/{id}), never another capture of its user's.  Rows go with their job and their key.

CREATE TABLE key_jobs (
    key_id text NOT NULL REFERENCES api_keys (key_id) ON DELETE CASCADE,
    job_id text NOT NULL REFERENCES jobs (job_id) ON DELETE CASCADE,
    PRIMARY KEY (key_id, job_id)
);
CREATE INDEX key_jobs_job_idx ON key_jobs (job_id);
