-- When charge.overdue is to be sent for an open due-date charge: the end
-- of its effective due date in Brasília. NULL for an immediate charge, a
-- closed one, and once the notice is sent; the partial index holds only
-- the charges still waiting for theirs.
ALTER TABLE charges ADD COLUMN overdue_at TEXT CHECK (length(overdue_at) = 27);
CREATE INDEX charges_overdue_at ON charges (overdue_at, id) WHERE overdue_at IS NOT NULL;
