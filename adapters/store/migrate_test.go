package store

import (
	"io/fs"
	"slices"
	"testing"
)

// Every migration exists in both dialects under the same name, so both
// databases always have the same schema version.
func TestMigrationsMatchAcrossDialects(t *testing.T) {
	names := func(dialect string) []string {
		entries, err := fs.ReadDir(migrationFS, "migrations/"+dialect)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, e := range entries {
			out = append(out, e.Name())
		}
		return out
	}
	pg, lite := names(DialectPostgres), names(DialectSQLite)
	if len(pg) == 0 || !slices.Equal(pg, lite) {
		t.Errorf("migrations differ between dialects:\npostgres: %v\nsqlite:   %v", pg, lite)
	}
	for _, d := range []string{DialectPostgres, DialectSQLite} {
		ms, err := migrations(d)
		if err != nil {
			t.Fatalf("%s: %v", d, err)
		}
		for _, m := range ms.Sorted() {
			if m.Up == nil {
				t.Errorf("%s: migration %s has no up file", d, m.Name)
			}
		}
	}
}
