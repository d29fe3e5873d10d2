package store

import (
	"cmp"

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

// countKey is one counter row.
type countKey struct {
	accountID, mode, status string
	shard                   int
}

func (a countKey) compare(b countKey) int {
	return cmp.Or(cmp.Compare(a.accountID, b.accountID), cmp.Compare(a.mode, b.mode), cmp.Compare(a.status, b.status),
		cmp.Compare(a.shard, b.shard))
}

// countDelta adds delta to the count of status for the charge's account,
// in the charge's shard. Every insert of a charge and every change of its
// status writes one in the same transaction, so the counts stay exact.
func countDelta(idb bun.IDB, accountID, mode, status, chargeID string, delta int64) schema.QueryAppender {
	return countShardDelta(idb, countKey{accountID, mode, status, shardOf(chargeID)}, delta)
}

func countShardDelta(idb bun.IDB, k countKey, delta int64) schema.QueryAppender {
	return idb.NewInsert().Model(&countRow{AccountID: k.accountID, Mode: k.mode, Status: k.status, Shard: k.shard, N: delta}).
		On("CONFLICT (account_id, mode, status, shard) DO UPDATE").Set("n = cc.n + EXCLUDED.n")
}
