-- Capture keys: they only add to their user's memory (notes, files, pages, links) and follow those
-- jobs, and read nothing else (a browser extension keeps one; see app/http.py).

ALTER TABLE api_keys DROP CONSTRAINT IF EXISTS api_keys_scope_check;
ALTER TABLE api_keys ADD CONSTRAINT api_keys_scope_check
    CHECK (scope IN ('user', 'admin', 'producer', 'capture'));
