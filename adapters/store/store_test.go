package store_test

import (
	"context"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

func TestSQLite(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.SQLiteDSN(t)) })
}

func TestPostgres(t *testing.T) {
	t.Parallel()
	runContract(t, func(t *testing.T) *store.DB { return openStore(t, testenv.PostgresDSN(t)) })
}

func TestSQLiteInMemory(t *testing.T) {
	t.Parallel()
	db := openStore(t, "sqlite::memory:")
	scope := ports.Scope{AccountID: "acct_mem", Mode: domain.ModeLive}
	c := newCharge(t, scope, baseTime, nil)
	if err := db.CreateCharge(t.Context(), c, nil, nil); err != nil {
		t.Fatal(err)
	}
	// The single connection keeps the in-memory database alive between
	// calls.
	if _, err := db.GetCharge(t.Context(), scope, c.ID()); err != nil {
		t.Fatalf("GetCharge after CreateCharge: %v", err)
	}
}

func TestOpenRejectsUnknownURL(t *testing.T) {
	t.Parallel()
	_, err := store.Open(t.Context(), "mysql://root:secret@localhost/quita")
	if err == nil {
		t.Fatal("Open accepted a mysql:// URL")
	}
	if strings.Contains(err.Error(), "secret") {
		t.Errorf("error %q repeats the password", err)
	}
}

// openStore opens and migrates the database at dsn and closes it when t
// ends (before testenv drops a Postgres database: cleanups run last first).
func openStore(t testing.TB, dsn string) *store.DB {
	t.Helper()
	ctx := context.Background()
	db, err := store.Open(ctx, dsn)
	if err != nil {
		t.Fatalf("Open: %v", err)
	}
	t.Cleanup(func() { db.Close() })
	if err := db.Migrate(ctx); err != nil {
		t.Fatalf("Migrate: %v", err)
	}
	return db
}

// runContract is the one suite every store must pass. open returns a
// migrated, empty store of its own for each test.
func runContract(t *testing.T, open func(t *testing.T) *store.DB) {
	tests := []struct {
		name string
		run  func(t *testing.T, db *store.DB)
	}{
		{"MigrateIsIdempotent", testMigrateIsIdempotent},
		{"ChargeRoundTripsEveryField", testChargeRoundTripsEveryField},
		{"ChargeRoundTripFromDomain", testChargeRoundTripFromDomain},
		{"ChargeScopeIsolation", testChargeScopeIsolation},
		{"DuplicateIdempotencyKeyWritesNothing", testDuplicateIdempotencyKeyWritesNothing},
		{"ConcurrentIdempotencyKeyHasOneWinner", testConcurrentIdempotencyKeyHasOneWinner},
		{"AnswerIsStoredOnce", testAnswerIsStoredOnce},
		{"ConcurrentCreatesKeepTheirOwnOutcome", testConcurrentCreatesKeepTheirOwnOutcome},
		{"DuplicateChargeIDIsDuplicate", testDuplicateChargeIDIsDuplicate},
		{"UpdateChargeSavesStateAndEvents", testUpdateChargeSavesStateAndEvents},
		{"UpdateChargeRollsBackOnError", testUpdateChargeRollsBackOnError},
		{"UpdateChargeOutOfScope", testUpdateChargeOutOfScope},
		{"ConcurrentUpdatesLoseNothing", testConcurrentUpdatesLoseNothing},
		{"ListChargesPaginates", testListChargesPaginates},
		{"ListChargesFilters", testListChargesFilters},
		{"ListChargesCursorOutOfScope", testListChargesCursorOutOfScope},
		{"TimestampsOrderToTheMicrosecond", testTimestampsOrderToTheMicrosecond},
		{"OutOfRangeInstantsNeverReachTheDatabase", testOutOfRangeInstantsNeverReachTheDatabase},
		{"ListOpenExpired", testListOpenExpired},
		{"PixReturns", testPixReturns},
		{"ConcurrentReturnClaims", testConcurrentReturnClaims},
		{"ListEvents", testListEvents},
		{"ListEventsAcrossPairs", testListEventsAcrossPairs},
		{"EventScanIsBounded", testEventScanIsBounded},
		{"EventHeadAndScopes", testEventHeadAndScopes},
		{"DeleteEventsBefore", testDeleteEventsBefore},
		{"AccountsUsersAndKeys", testAccountsUsersAndKeys},
		{"RevokedKeyIsNotFound", testRevokedKeyIsNotFound},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			tt.run(t, open(t))
		})
	}
}

func testMigrateIsIdempotent(t *testing.T, db *store.DB) {
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	for range 2 {
		if err := db.Migrate(t.Context()); err != nil {
			t.Fatalf("Migrate again: %v", err)
		}
	}
	mustGet(t, db, liveA, c.ID())
	if err := db.Ping(t.Context()); err != nil {
		t.Fatal(err)
	}
	if d := db.Dialect(); d != store.DialectPostgres && d != store.DialectSQLite {
		t.Errorf("Dialect() = %q", d)
	}
	if db.Bun() == nil {
		t.Error("Bun() = nil")
	}
}

// TestPostgresConcurrentMigrate starts several stores on one new database
// at once, as several quitad processes would: the advisory lock lets one
// migrate while the others wait and then find nothing to do.
func TestPostgresConcurrentMigrate(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	const n = 4
	dbs := make([]*store.DB, n)
	for i := range dbs {
		db, err := store.Open(t.Context(), dsn)
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { db.Close() })
		dbs[i] = db
	}
	var wg sync.WaitGroup
	for _, db := range dbs {
		wg.Go(func() {
			if err := db.Migrate(context.Background()); err != nil {
				t.Errorf("concurrent Migrate: %v", err)
			}
		})
	}
	wg.Wait()
	var applied int
	err := dbs[0].Bun().NewSelect().Table("bun_migrations").ColumnExpr("count(*)").Scan(t.Context(), &applied)
	if err != nil {
		t.Fatal(err)
	}
	files, err := filepath.Glob("migrations/postgres/*.up.sql")
	if err != nil || len(files) == 0 {
		t.Fatalf("migration files: %v", err)
	}
	if applied != len(files) {
		t.Errorf("%d migration records, want %d (each migration applied once)", applied, len(files))
	}
}
