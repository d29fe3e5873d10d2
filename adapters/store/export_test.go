package store

import "github.com/quitapix/quita/ports"

// PayoutFlights is what the payout batches did so far (zero on SQLite).
func (db *DB) PayoutFlights() ports.FlightStats {
	if db.payouts == nil {
		return ports.FlightStats{}
	}
	return db.payouts.stats()
}
