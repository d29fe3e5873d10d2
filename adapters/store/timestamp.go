package store

import (
	"fmt"
	"time"

	"github.com/uptrace/bun/dialect"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/ports"
)

// sqliteTimeLayout is how an instant is stored in SQLite: UTC and always six
// fraction digits, so every value has the same length and text order is
// time order. (RFC 3339 with trimmed fractions does not sort: "…05Z" comes
// after "…05.5Z" because 'Z' > '.'.) SQLite's date functions read it. The
// schema checks the length (27) of every stored instant.
const sqliteTimeLayout = "2006-01-02T15:04:05.000000Z"

// dbTime is an instant column. It is stored to the microsecond, the
// precision of PostgreSQL's timestamptz, truncated the same way in both
// dialects: timestamptz on Postgres, fixed-width UTC text on SQLite. The zero
// time is NULL, and NULL reads back as the zero time.
type dbTime struct{ time.Time }

// newDBTime keeps t as stored: UTC, truncated to the microsecond.
func newDBTime(t time.Time) dbTime {
	if t.IsZero() {
		return dbTime{}
	}
	return dbTime{t.UTC().Truncate(time.Microsecond)}
}

// ceilDBTime is the first stored instant at or after t, for inclusive lower
// bounds: a stored value is never between two microseconds, and never the
// zero time, which is NULL (a bound of NULL would match nothing).
func ceilDBTime(t time.Time) dbTime {
	c := newDBTime(t)
	if c.Before(t) || c.IsZero() {
		c.Time = c.Add(time.Microsecond)
	}
	return c
}

var _ schema.QueryAppender = dbTime{}

// AppendQuery writes the instant as a literal of the dialect.
func (t dbTime) AppendQuery(gen schema.QueryGen, b []byte) ([]byte, error) {
	if t.IsZero() {
		return dialect.AppendNull(b), nil
	}
	u := t.UTC().Truncate(time.Microsecond)
	if !ports.InTimeRange(u) {
		// bun writes this error's text in place of the value; guardedConn
		// refuses the statement before it is sent.
		return nil, fmt.Errorf("store: time %v is outside years 0001-9999", u)
	}
	if gen.Dialect().Name() != dialect.SQLite {
		return gen.Dialect().AppendTime(b, u), nil
	}
	b = append(b, '\'')
	b = u.AppendFormat(b, sqliteTimeLayout)
	return append(b, '\''), nil
}

// Scan reads timestamptz (Postgres) or stored text (SQLite) as UTC.
func (t *dbTime) Scan(src any) error {
	switch v := src.(type) {
	case nil:
		t.Time = time.Time{}
	case time.Time:
		t.Time = v.UTC()
	case string:
		return t.parse(v)
	case []byte:
		return t.parse(string(v))
	default:
		return fmt.Errorf("store: cannot scan %T into a time", src)
	}
	return nil
}

func (t *dbTime) parse(s string) error {
	v, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return fmt.Errorf("store: stored time %q: %w", s, err)
	}
	t.Time = v.UTC()
	return nil
}

// ptr returns the time or nil for NULL, for optional domain fields.
func (t dbTime) ptr() *time.Time {
	if t.IsZero() {
		return nil
	}
	v := t.Time
	return &v
}
