-- overdue_at: when charge.overdue is to be sent for an open due-date
-- charge (the end of its effective due date in Brasília); NULL for an
-- immediate charge, a closed one, and once the notice is sent. The partial
-- index holds only the charges still waiting for theirs.
-- overdue_notified: the notice was sent.
ALTER TABLE charges ADD COLUMN overdue_at TEXT CHECK (length(overdue_at) = 27);
ALTER TABLE charges ADD COLUMN overdue_notified INTEGER NOT NULL DEFAULT 0 CHECK (overdue_notified IN (0, 1));
CREATE INDEX charges_overdue_at ON charges (overdue_at, id) WHERE overdue_at IS NOT NULL;
