package store

import (
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quitapix/quita/ports"
)

// PayoutFlights is what the payout batches did so far (zero on SQLite).
func (db *DB) PayoutFlights() ports.FlightStats {
	if db.payouts == nil {
		return ports.FlightStats{}
	}
	return db.payouts.stats()
}

// HotPool is the request path's pool (nil on SQLite).
func (db *DB) HotPool() *pgxpool.Pool { return db.hot }
