package store_test

import (
	"context"
	"database/sql"
	"net/url"
	"strings"
	"testing"

	"github.com/jackc/pgx/v5"
	_ "github.com/jackc/pgx/v5/stdlib"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// bun writes values into the SQL text, doubling quotes only. A database
// whose default turns standard_conforming_strings off would read a
// backslash before a quote as an escape and end the literal early; the
// store asks for the standard behaviour at connect, which outranks the
// database's default, so a value with \' is stored as written and
// nothing after it runs as SQL.
func TestBackslashQuoteIsDataWhateverTheDatabaseDefault(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	name := strings.TrimPrefix(u.Path, "/")
	admin, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer admin.Close()
	if _, err := admin.ExecContext(ctx, "ALTER DATABASE "+pgx.Identifier{name}.Sanitize()+" SET standard_conforming_strings = off"); err != nil {
		t.Fatal(err)
	}
	admin.Close() // its connection started before the ALTER
	check, err := sql.Open("pgx", dsn)
	if err != nil {
		t.Fatal(err)
	}
	defer check.Close()
	var def string
	if err := check.QueryRowContext(ctx, "SELECT setting FROM pg_settings WHERE name = 'standard_conforming_strings'").Scan(&def); err != nil {
		t.Fatal(err)
	}
	if def != "off" {
		t.Fatalf("a plain connection to the database sees standard_conforming_strings = %s, want the database's default off", def)
	}

	db := openStore(t, dsn)
	scope := webhookAccount(t, db)
	e := newEndpoint(t, db, scope, domain.EventChargeCreated)
	hostile := `https://hooks.example.com/x\'; DELETE FROM webhook_endpoints; --`
	if _, err := db.UpdateEndpoint(ctx, scope, e.ID, ports.EndpointPatch{URL: &hostile}, baseTime); err != nil {
		t.Fatal(err)
	}
	got, err := db.GetEndpoint(ctx, scope, e.ID)
	if err != nil {
		t.Fatalf("the endpoint after the update: %v", err)
	}
	if got.URL != hostile {
		t.Errorf("stored URL %q, want %q as written", got.URL, hostile)
	}
}
