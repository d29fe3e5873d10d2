-- On PostgreSQL the list indexes of charges and request_logs become
-- ascending, for the way its B-tree splits pages (see there). SQLite's
-- indexes are left as they are.
SELECT 1;
