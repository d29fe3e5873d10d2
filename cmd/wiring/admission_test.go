package wiring

import (
	"context"
	"testing"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/internal/testenv"
)

// On Postgres the API admits four requests per pooled connection unless
// QUITA_MAX_IN_FLIGHT says otherwise; -1 turns the limit off, and SQLite
// (one connection, on which requests queue anyway) has none by default.
func TestAdmissionPlaces(t *testing.T) {
	ctx := context.Background()
	pg, err := store.Open(ctx, testenv.PostgresDSN(t))
	if err != nil {
		t.Fatal(err)
	}
	defer pg.Close()
	if got, want := admission(Config{}, pg).Places(), 4*pg.PoolSize(); got != want || want == 0 {
		t.Errorf("default places %d, want %d (four per connection)", got, want)
	}
	if got := admission(Config{MaxInFlight: 7}, pg).Places(); got != 7 {
		t.Errorf("QUITA_MAX_IN_FLIGHT=7: places %d, want 7", got)
	}
	if a := admission(Config{MaxInFlight: -1}, pg); a != nil {
		t.Errorf("QUITA_MAX_IN_FLIGHT=-1: a limiter with %d places, want none", a.Places())
	}
	lite, err := store.Open(ctx, "sqlite://file:"+t.Name()+"?mode=memory&cache=shared")
	if err != nil {
		t.Fatal(err)
	}
	defer lite.Close()
	if a := admission(Config{}, lite); a != nil {
		t.Errorf("SQLite: a limiter with %d places, want none", a.Places())
	}
}
