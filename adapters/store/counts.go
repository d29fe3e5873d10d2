package store

import (
	"hash/fnv"

	"github.com/uptrace/bun"
	"github.com/uptrace/bun/schema"
)

// countShards spreads one account's counters over rows, so concurrent
// writers rarely wait on the same one.
const countShards = 16

type countRow struct {
	bun.BaseModel `bun:"table:charge_counts,alias:cc"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	Status    string `bun:"status,pk"`
	Shard     int    `bun:"shard,pk"`
	N         int64  `bun:"n"`
}

// countDelta adds delta to the count of status for the charge's account,
// in the charge's shard. Every insert of a charge and every change of its
// status writes one in the same transaction, so the counts stay exact.
func countDelta(idb bun.IDB, accountID, mode, status, chargeID string, delta int64) schema.QueryAppender {
	h := fnv.New32a()
	_, _ = h.Write([]byte(chargeID))
	return idb.NewInsert().Model(&countRow{AccountID: accountID, Mode: mode, Status: status, Shard: int(h.Sum32() % countShards), N: delta}).
		On("CONFLICT (account_id, mode, status, shard) DO UPDATE").Set("n = cc.n + EXCLUDED.n")
}

// statusCountChanges are the count deltas of a charge moving from one
// status to another (none when it stays).
func statusCountChanges(idb bun.IDB, accountID, mode, chargeID, from, to string) []schema.QueryAppender {
	if from == to {
		return nil
	}
	return []schema.QueryAppender{
		countDelta(idb, accountID, mode, from, chargeID, -1),
		countDelta(idb, accountID, mode, to, chargeID, 1),
	}
}
