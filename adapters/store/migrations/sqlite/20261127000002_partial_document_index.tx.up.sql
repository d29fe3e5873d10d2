-- Only a charge with a customer document has an entry in the document
-- index (issue 17): the list's document filter is the index's only reader,
-- and it asks for a document that is never empty (the query repeats the
-- predicate so the planner can use the partial index). A create without a
-- document — most of them — writes one index entry fewer.
CREATE INDEX IF NOT EXISTS charges_document_part_idx
    ON charges (account_id, mode, customer_document_norm, created_at DESC, id DESC)
    WHERE customer_document_norm <> '';
DROP INDEX IF EXISTS charges_document_idx;
