package ports

import (
	"errors"
	"time"
)

// The instants every store keeps and compares: UTC years 0001 to 9999.
// Both databases hold that range (SQLite as fixed-width text with a
// four-digit year, whose text order is time order only within it;
// PostgreSQL's timestamptz holds more), so a time outside it is refused
// where it enters — a query parameter, a form field — and a store never
// sees one.
var (
	MinTime = time.Date(1, time.January, 1, 0, 0, 0, 0, time.UTC)
	MaxTime = time.Date(9999, time.December, 31, 23, 59, 59, 999_999_999, time.UTC)
)

// InTimeRange reports whether t lies within MinTime–MaxTime, whatever its
// location: a time in year 9999 at -03:00 can be year 10000 in UTC.
func InTimeRange(t time.Time) bool {
	return !t.Before(MinTime) && !t.After(MaxTime)
}

// ErrUnstorableValue: a value of the call cannot be written into a
// statement (an instant outside MinTime–MaxTime, text holding NUL), so
// the statement was refused before it reached the database and nothing
// of it ran. It is the caller's input that is wrong: retrying the same
// call fails the same way.
var ErrUnstorableValue = errors.New("value outside what the store can keep")
