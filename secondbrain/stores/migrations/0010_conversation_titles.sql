-- Conversations that last: a title the person can set (until then the first question stands in),
-- and the list read newest first.  Deleting a conversation removes it and its turns (no tombstone:
-- a person who deletes one expects it gone).
ALTER TABLE conversations ADD COLUMN title text;
