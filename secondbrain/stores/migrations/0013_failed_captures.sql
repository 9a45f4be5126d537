-- A failed capture says whether trying it again may succeed: its failure was of the moment (retries ran
-- out while a dependency was away) or of the server's set-up (OCR not installed), not of the file.  The
-- web page offers Retry only for those.
ALTER TABLE jobs ADD COLUMN error_retryable boolean NOT NULL DEFAULT false;
