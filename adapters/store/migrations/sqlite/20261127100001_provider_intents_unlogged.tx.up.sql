-- On PostgreSQL the cob intents become an unlogged table (see there).
-- SQLite has no such thing: nothing changes here.
SELECT 1;
