-- Refund workers claim open refunds with a short lease (issue 12 item 1):
-- a claimed refund is skipped by every other worker, in any process, until
-- its lease ends, so processes share the work instead of all reading the
-- same oldest rows. A refund the acquirer is still working on is simply
-- claimed again once its lease has run out.
ALTER TABLE refunds ADD COLUMN lease_until timestamptz;
