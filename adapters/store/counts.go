package store

import "github.com/uptrace/bun"

// countRow is one row of charge_counts: an account's number of charges of
// a status. Rows written before the counters were folded from deltas
// (stat_deltas.go) were spread over shards by charge id; folds write shard
// 0, and readers sum every shard with the pending deltas.
type countRow struct {
	bun.BaseModel `bun:"table:charge_counts,alias:cc"`

	AccountID string `bun:"account_id,pk"`
	Mode      string `bun:"mode,pk"`
	Status    string `bun:"status,pk"`
	Shard     int    `bun:"shard,pk"`
	N         int64  `bun:"n"`
}
