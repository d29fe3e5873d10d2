package bizdays_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

func TestParseDate(t *testing.T) {
	t.Parallel()
	good := map[string]bizdays.Date{
		"2026-02-17": bizdays.MustDate(2026, time.February, 17),
		"2024-02-29": bizdays.MustDate(2024, time.February, 29),
		"1900-01-01": bizdays.MustDate(1900, time.January, 1),
		"9999-12-31": bizdays.MustDate(9999, time.December, 31),
	}
	for s, want := range good {
		got, err := bizdays.ParseDate(s)
		if err != nil || got != want || got.String() != s {
			t.Errorf("ParseDate(%q) = %v, %v; want %v", s, got, err, want)
		}
	}
	for _, s := range []string{
		"", "2026-2-17", "2026-02-17T00:00:00Z", "2025-02-29", "2026-13-01", "2026-00-10",
		"2026-04-31", "1899-12-31", "+026-02-17", "2026/02/17", "２026-02-17", "2026-02-1x", " 2026-02-17",
	} {
		if d, err := bizdays.ParseDate(s); !errors.Is(err, bizdays.ErrInvalidDate) {
			t.Errorf("ParseDate(%q) = %v, %v; want ErrInvalidDate", s, d, err)
		}
	}
}

func TestDateText(t *testing.T) {
	t.Parallel()
	d := bizdays.MustDate(2026, time.June, 4)
	b, err := d.MarshalText()
	if err != nil || string(b) != "2026-06-04" {
		t.Fatalf("MarshalText = %q, %v", b, err)
	}
	var back bizdays.Date
	if err := back.UnmarshalText(b); err != nil || back != d {
		t.Fatalf("UnmarshalText = %v, %v", back, err)
	}
	if err := back.UnmarshalText([]byte("2026-06-31")); err == nil || back != d {
		t.Errorf("UnmarshalText of a bad date = %v, changed to %v", err, back)
	}
	if (bizdays.Date{}).String() != "" || !(bizdays.Date{}).IsZero() || (bizdays.Date{}).Valid() {
		t.Error("the zero Date must print empty, be IsZero and not Valid")
	}
}

// DaysSince spans the whole range of years exactly: a time.Duration could
// not (it ends after 292 years).
func TestDaysSince(t *testing.T) {
	t.Parallel()
	first, last := bizdays.MustDate(1900, time.January, 1), bizdays.MustDate(9999, time.December, 31)
	// 8100 years: 8100×365 days plus 1964 leap days (2025 multiples of 4,
	// less the 81 centuries, plus the 20 multiples of 400 among them).
	const want = 8100*365 + 2025 - 81 + 20 - 1
	if got := last.DaysSince(first); got != want {
		t.Errorf("DaysSince over the range = %d, want %d", got, want)
	}
	if got := first.DaysSince(last); got != -want {
		t.Errorf("negated = %d", got)
	}
	d := bizdays.MustDate(2026, time.February, 28)
	if got := d.AddDays(1); got != bizdays.MustDate(2026, time.March, 1) {
		t.Errorf("AddDays over February = %v", got)
	}
	if got := d.AddDays(-365).AddDays(365); got != d {
		t.Errorf("AddDays round trip = %v", got)
	}
	if !d.Before(d.AddDays(1)) || !d.AddDays(1).After(d) || d.Compare(d) != 0 {
		t.Error("Before/After/Compare disagree with AddDays")
	}
}

func TestDateOf(t *testing.T) {
	t.Parallel()
	brt := time.FixedZone("BRT", -3*60*60)
	// 02:30 UTC is still the evening before in Brasília.
	at := time.Date(2026, time.February, 17, 2, 30, 0, 0, time.UTC)
	if got := bizdays.DateOf(at.In(brt)); got != bizdays.MustDate(2026, time.February, 16) {
		t.Errorf("DateOf in Brasília = %v", got)
	}
	if got := bizdays.DateOf(time.Date(1800, 1, 1, 0, 0, 0, 0, time.UTC)); !got.IsZero() {
		t.Errorf("DateOf out of range = %v, want zero", got)
	}
}
