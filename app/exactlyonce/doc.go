// Package exactlyonce runs a financial write — a charge create, a refund,
// a payout — at most once per idempotency key, and answers every retry of
// the key with the first answer, byte for byte.
//
// A write reads: validate → attempt → cob → commit. Runner.Do claims the
// key (or finds it answered), then calls the write with an Attempt; a
// write that opens a cob at the acquirer calls Attempt.BeforeCob first and
// asks for Attempt.TxID; the write commits Attempt.Record in the same
// transaction as its resource. The guarantee is always the database: the
// record's unique key refuses a second commit of the key
// (ports.ErrIdempotencyKeyExists), and the write is then answered from the
// record.
//
// Two strategies decide how a duplicate is caught before the write runs:
//
//   - DatabaseChecked looks for the key's record in the database before
//     every write; for a live cob the intent is recorded in the same round
//     trip, and the cob's txid is derived from the key, so a retry after
//     any crash asks the acquirer for the same cob.
//   - CacheFirst (a shared cache: Redis) trusts a claim the cache acquired
//     and skips the database's check; the cob's intent goes to the cache
//     beside the claim and the cob gets a txid of its own. A write that
//     then finds the key used after all (the cache lost it) answers from
//     the record, and the sweep cancels the cob it opened. Without an
//     acquired claim it works as DatabaseChecked.
//
// An intent is what lets Runner.SweepOrphanCobs cancel a cob whose write
// never committed (a crash between the acquirer's answer and the commit).
package exactlyonce
