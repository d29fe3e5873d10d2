-- The terms of a due-date charge (due date, days after due, fine,
-- interest, discount, abatement) as JSON; NULL for an immediate charge.
ALTER TABLE charges ADD COLUMN due_terms text;
