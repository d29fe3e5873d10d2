-- Payers' money received before payer_funds existed: a charge held for
-- review, and every return not yet confirmed, get the entry a receipt now
-- writes (acquirer_clearing -> payer_funds), so that payer funds equal what
-- the charges hold and owe from the start.
INSERT INTO ledger_entries (id, account_id, mode, charge_id, refund_id, payout_id, kind, created_at)
SELECT 'pfh' || c.id, c.account_id, c.mode, c.id, '', '', 'payer_funds_received', c.updated_at
FROM charges c
WHERE c.status = 'PROCESSING' AND c.settlement_amount IS NOT NULL AND c.return_state = '';

INSERT INTO ledger_postings (entry_id, account_id, mode, currency, ledger_account, amount)
SELECT 'pfh' || c.id, c.account_id, c.mode, c.currency, v.account, v.sign * c.settlement_amount
FROM charges c
CROSS JOIN (SELECT 'acquirer_clearing' AS account, -1 AS sign UNION ALL SELECT 'payer_funds', 1) AS v
WHERE c.status = 'PROCESSING' AND c.settlement_amount IS NOT NULL AND c.return_state = '';

INSERT INTO ledger_entries (id, account_id, mode, charge_id, refund_id, payout_id, kind, created_at)
SELECT 'pfr' || r.end_to_end_id, r.account_id, r.mode, r.charge_id, '', '', 'payer_funds_received', r.created_at
FROM pix_returns r
WHERE r.status <> 'RETURNED';

INSERT INTO ledger_postings (entry_id, account_id, mode, currency, ledger_account, amount)
SELECT 'pfr' || r.end_to_end_id, r.account_id, r.mode, c.currency, v.account, v.sign * r.amount
FROM pix_returns r
JOIN charges c ON c.id = r.charge_id
CROSS JOIN (SELECT 'acquirer_clearing' AS account, -1 AS sign UNION ALL SELECT 'payer_funds', 1) AS v
WHERE r.status <> 'RETURNED';
