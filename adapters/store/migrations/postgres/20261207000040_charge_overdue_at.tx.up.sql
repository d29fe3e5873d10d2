-- overdue_at: when charge.overdue is to be sent for an open due-date
-- charge (the end of its effective due date in Brasília); NULL for an
-- immediate charge, a closed one, and once the notice is sent. The partial
-- index holds only the charges still waiting for theirs.
-- overdue_notified: the notice was sent.
ALTER TABLE charges ADD COLUMN overdue_at timestamptz;
ALTER TABLE charges ADD COLUMN overdue_notified boolean NOT NULL DEFAULT false;
CREATE INDEX charges_overdue_at ON charges (overdue_at, id) WHERE overdue_at IS NOT NULL;
