package bizdays

import (
	"errors"
	"fmt"
	"time"
)

// The years a Date may fall in. Four digits keep the YYYY-MM-DD form fixed
// in width, and the Gregorian calendar (and so the computus) holds for all
// of them.
const (
	MinYear = 1900
	MaxYear = 9999
)

// Date is a civil date: a year, month and day with no time of day and no
// zone. The zero Date is no date (IsZero); every other Date is a real day
// between MinYear-01-01 and MaxYear-12-31.
type Date struct {
	// t is midnight UTC of the day, so that adding days never meets a
	// daylight-saving gap and two equal dates compare equal with ==.
	t time.Time
}

// ErrInvalidDate is returned for a year, month and day that name no day of
// the calendar, or one outside MinYear..MaxYear.
var ErrInvalidDate = errors.New("bizdays: invalid date")

// NewDate returns the date year-month-day, or ErrInvalidDate when that day
// does not exist (30 Feb) or its year is outside MinYear..MaxYear.
func NewDate(year int, month time.Month, day int) (Date, error) {
	if year < MinYear || year > MaxYear || month < time.January || month > time.December || day < 1 || day > 31 {
		return Date{}, ErrInvalidDate
	}
	t := time.Date(year, month, day, 0, 0, 0, 0, time.UTC)
	if t.Day() != day {
		return Date{}, ErrInvalidDate
	}
	return Date{t: t}, nil
}

// MustDate is NewDate for dates written in code; it panics on an invalid one.
func MustDate(year int, month time.Month, day int) Date {
	d, err := NewDate(year, month, day)
	if err != nil {
		panic(fmt.Sprintf("bizdays.MustDate(%d, %d, %d): %v", year, month, day, err))
	}
	return d
}

// ParseDate reads exactly YYYY-MM-DD (ISO 8601, the form of the API Pix).
func ParseDate(s string) (Date, error) {
	if len(s) != 10 || s[4] != '-' || s[7] != '-' {
		return Date{}, fmt.Errorf("%w: %q is not YYYY-MM-DD", ErrInvalidDate, s)
	}
	var n [3]int
	for i, part := range []string{s[0:4], s[5:7], s[8:10]} {
		for _, c := range part {
			if c < '0' || c > '9' {
				return Date{}, fmt.Errorf("%w: %q is not YYYY-MM-DD", ErrInvalidDate, s)
			}
			n[i] = n[i]*10 + int(c-'0')
		}
	}
	d, err := NewDate(n[0], time.Month(n[1]), n[2])
	if err != nil {
		return Date{}, fmt.Errorf("%w: %q", err, s)
	}
	return d, nil
}

// DateOf returns the day of the calendar on which t falls in t's location.
// Callers pass t.In(brasilia), so the date is Brasília's. A day outside
// MinYear..MaxYear yields the zero Date.
func DateOf(t time.Time) Date {
	d, err := NewDate(t.Year(), t.Month(), t.Day())
	if err != nil {
		return Date{}
	}
	return d
}

// IsZero reports whether d is the zero Date, which names no day.
func (d Date) IsZero() bool { return d.t.IsZero() }

// Year, Month, Day and Weekday are d's parts.
func (d Date) Year() int             { return d.t.Year() }
func (d Date) Month() time.Month     { return d.t.Month() }
func (d Date) Day() int              { return d.t.Day() }
func (d Date) Weekday() time.Weekday { return d.t.Weekday() }

// AddDays returns the date n calendar days after d (before it for n < 0).
// The result may fall outside MinYear..MaxYear; callers that keep such a
// date check it with Valid.
func (d Date) AddDays(n int) Date { return Date{t: d.t.AddDate(0, 0, n)} }

// Valid reports whether d is a day between MinYear-01-01 and MaxYear-12-31.
func (d Date) Valid() bool {
	return !d.IsZero() && d.Year() >= MinYear && d.Year() <= MaxYear
}

// DaysSince returns the number of calendar days from o to d: positive when
// d is after o, 0 on the same day.
func (d Date) DaysSince(o Date) int {
	// Unix seconds, not Sub: a time.Duration spans only 292 years.
	return int((d.t.Unix() - o.t.Unix()) / secondsPerDay)
}

const secondsPerDay = 24 * 60 * 60

// Compare returns -1, 0 or +1 as d is before, on or after o.
func (d Date) Compare(o Date) int { return d.t.Compare(o.t) }

// Before and After compare whole days.
func (d Date) Before(o Date) bool { return d.t.Before(o.t) }
func (d Date) After(o Date) bool  { return d.t.After(o.t) }

// String is YYYY-MM-DD; the zero Date is "".
func (d Date) String() string {
	if d.IsZero() {
		return ""
	}
	return d.t.Format(time.DateOnly)
}

// MarshalText writes YYYY-MM-DD.
func (d Date) MarshalText() ([]byte, error) { return []byte(d.String()), nil }

// UnmarshalText reads YYYY-MM-DD, as ParseDate.
func (d *Date) UnmarshalText(b []byte) error {
	v, err := ParseDate(string(b))
	if err != nil {
		return err
	}
	*d = v
	return nil
}
