package wiring

import (
	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/ports"
)

// createFlight reports db's create flight to /metrics (Postgres only:
// SQLite writes each create in its own transaction).
func createFlight(db *store.DB) func() ports.FlightStats {
	if db.Dialect() != store.DialectPostgres {
		return nil
	}
	return db.CreateFlights
}

// admission is the HTTP concurrency limit (Config.MaxInFlight).
func admission(cfg Config, db *store.DB) *httpapi.Admission {
	n := cfg.MaxInFlight
	switch {
	case n < 0:
		return nil
	case n == 0 && db.Dialect() != store.DialectPostgres:
		return nil
	case n == 0:
		n = placesPerConnection * db.PoolSize()
	}
	return httpapi.NewAdmission(httpapi.AdmissionConfig{MaxInFlight: n})
}
