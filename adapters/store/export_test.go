package store

import "github.com/quitapix/quita/ports"

// PayoutFlights is what the payout batches did so far (zero on SQLite).
func (db *DB) PayoutFlights() ports.FlightStats {
	if db.payouts == nil {
		return ports.FlightStats{}
	}
	return flightStats(db.payouts.Stats())
}

// SetEventScan makes a filtered events page examine at most n rows
// instead of ports.MaxEventScan.
func (db *DB) SetEventScan(n int) { db.eventScan = n }
