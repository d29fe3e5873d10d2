package bizdays_test

import (
	"testing"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

func date(s string) bizdays.Date {
	d, err := bizdays.ParseDate(s)
	if err != nil {
		panic(err)
	}
	return d
}

// Easter Sundays from published tables, including the earliest (22 Mar)
// and latest (25 Apr) days it can fall on.
func TestEaster(t *testing.T) {
	t.Parallel()
	for _, want := range []string{
		"1900-04-15", "1943-04-25", "1961-04-02", "2000-04-23", "2008-03-23", "2011-04-24",
		"2016-03-27", "2019-04-21", "2020-04-12", "2021-04-04", "2022-04-17", "2023-04-09",
		"2024-03-31", "2025-04-20", "2026-04-05", "2027-03-28", "2028-04-16", "2029-04-01",
		"2030-04-21", "2038-04-25", "2285-03-22",
	} {
		d := date(want)
		if got := bizdays.Easter(d.Year()); got != d {
			t.Errorf("Easter(%d) = %v, want %v", d.Year(), got, want)
		}
	}
}

func TestEasterIsASundayInItsWindow(t *testing.T) {
	t.Parallel()
	for y := bizdays.MinYear; y <= bizdays.MaxYear; y++ {
		e := bizdays.Easter(y)
		lo, hi := bizdays.MustDate(y, time.March, 22), bizdays.MustDate(y, time.April, 25)
		if e.Weekday() != time.Sunday || e.Before(lo) || e.After(hi) {
			t.Fatalf("Easter(%d) = %v (%v)", y, e, e.Weekday())
		}
	}
}

func TestHolidays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		year int
		want []string
	}{
		{2026, []string{"2026-01-01", "2026-02-16", "2026-02-17", "2026-04-03", "2026-04-21", "2026-05-01",
			"2026-06-04", "2026-09-07", "2026-10-12", "2026-11-02", "2026-11-15", "2026-11-20", "2026-12-25"}},
		{2025, []string{"2025-01-01", "2025-03-03", "2025-03-04", "2025-04-18", "2025-04-21", "2025-05-01",
			"2025-06-19", "2025-09-07", "2025-10-12", "2025-11-02", "2025-11-15", "2025-11-20", "2025-12-25"}},
		{2024, []string{"2024-01-01", "2024-02-12", "2024-02-13", "2024-03-29", "2024-04-21", "2024-05-01",
			"2024-05-30", "2024-09-07", "2024-10-12", "2024-11-02", "2024-11-15", "2024-11-20", "2024-12-25"}},
		// No 20 Nov before 2024.
		{2023, []string{"2023-01-01", "2023-02-20", "2023-02-21", "2023-04-07", "2023-04-21", "2023-05-01",
			"2023-06-08", "2023-09-07", "2023-10-12", "2023-11-02", "2023-11-15", "2023-12-25"}},
		{2027, []string{"2027-01-01", "2027-02-08", "2027-02-09", "2027-03-26", "2027-04-21", "2027-05-01",
			"2027-05-27", "2027-09-07", "2027-10-12", "2027-11-02", "2027-11-15", "2027-11-20", "2027-12-25"}},
		// Good Friday on Tiradentes' eve: Easter on 24 Apr.
		{2011, []string{"2011-01-01", "2011-03-07", "2011-03-08", "2011-04-21", "2011-04-22", "2011-05-01",
			"2011-06-23", "2011-09-07", "2011-10-12", "2011-11-02", "2011-11-15", "2011-12-25"}},
	}
	for _, tt := range tests {
		got := bizdays.Holidays(tt.year)
		if len(got) != len(tt.want) {
			t.Errorf("%d: %d holidays, want %d: %v", tt.year, len(got), len(tt.want), got)
			continue
		}
		for i, h := range got {
			if h.Date.String() != tt.want[i] || h.Name == "" {
				t.Errorf("%d: holiday %d = %v %q, want %s", tt.year, i, h.Date, h.Name, tt.want[i])
			}
			if name, ok := bizdays.HolidayName(h.Date); !ok || name != h.Name {
				t.Errorf("HolidayName(%v) = %q, %v; want %q", h.Date, name, ok, h.Name)
			}
		}
	}
	if bizdays.Holidays(1899) != nil || bizdays.Holidays(10000) != nil {
		t.Error("Holidays outside the range of years must be nil")
	}
}

func TestIsBusinessDay(t *testing.T) {
	t.Parallel()
	tests := []struct {
		day  string
		want bool
		why  string
	}{
		{"2026-02-13", true, "Friday before Carnival"},
		{"2026-02-14", false, "Saturday"},
		{"2026-02-15", false, "Sunday"},
		{"2026-02-16", false, "Carnival Monday"},
		{"2026-02-17", false, "Carnival Tuesday"},
		{"2026-02-18", true, "Ash Wednesday: banks open (from noon)"},
		{"2026-04-03", false, "Good Friday"},
		{"2026-04-06", true, "Easter Monday is no holiday"},
		{"2026-06-04", false, "Corpus Christi"},
		{"2026-06-05", true, "the Friday after Corpus Christi"},
		{"2026-11-20", false, "Consciência Negra, a Friday"},
		{"2023-11-20", true, "Consciência Negra before it was national, a Monday"},
		{"2026-12-24", true, "Christmas Eve is a business day"},
		{"2026-12-31", true, "the year's last day is a business day"},
		{"2027-01-01", false, "New Year"},
		{"2020-12-25", false, "Christmas, a Friday"},
		{"2020-10-20", true, "a Tuesday"},
	}
	for _, tt := range tests {
		if got := bizdays.IsBusinessDay(date(tt.day)); got != tt.want {
			t.Errorf("IsBusinessDay(%s) = %v, want %v (%s)", tt.day, got, tt.want, tt.why)
		}
	}
	if bizdays.IsBusinessDay(bizdays.Date{}) {
		t.Error("the zero Date is not a business day")
	}
}

func TestNextBusinessDay(t *testing.T) {
	t.Parallel()
	tests := []struct{ from, want string }{
		{"2026-02-12", "2026-02-12"}, // a business day stays
		{"2026-02-14", "2026-02-18"}, // Carnival Saturday → Ash Wednesday
		{"2026-02-17", "2026-02-18"},
		{"2026-04-03", "2026-04-06"}, // Good Friday → Monday
		{"2026-06-04", "2026-06-05"}, // Corpus Christi → Friday
		{"2020-12-25", "2020-12-28"}, // the API Pix's own example: Christmas on a Friday
		{"2021-08-28", "2021-08-30"}, // ... and a Saturday
		{"2011-04-21", "2011-04-25"}, // Tiradentes, Good Friday, weekend
		{"2026-12-31", "2026-12-31"},
		{"2027-01-01", "2027-01-04"},
	}
	for _, tt := range tests {
		if got := bizdays.NextBusinessDay(date(tt.from)); got.String() != tt.want {
			t.Errorf("NextBusinessDay(%s) = %v, want %s", tt.from, got, tt.want)
		}
	}
}

func TestAddBusinessDays(t *testing.T) {
	t.Parallel()
	tests := []struct {
		from string
		n    int
		want string
	}{
		{"2026-02-13", 0, "2026-02-13"},
		{"2026-02-13", 1, "2026-02-18"},
		{"2026-02-14", 0, "2026-02-18"},
		{"2026-02-14", 2, "2026-02-20"},
		{"2026-12-30", 2, "2027-01-04"},
	}
	for _, tt := range tests {
		if got := bizdays.AddBusinessDays(date(tt.from), tt.n); got.String() != tt.want {
			t.Errorf("AddBusinessDays(%s, %d) = %v, want %s", tt.from, tt.n, got, tt.want)
		}
	}
}

func TestBusinessDaysBetween(t *testing.T) {
	t.Parallel()
	tests := []struct {
		a, b string
		want int
	}{
		{"2026-02-13", "2026-02-13", 0},
		{"2026-02-13", "2026-02-14", 0}, // Saturday
		{"2026-02-13", "2026-02-18", 1}, // over Carnival
		{"2026-02-14", "2026-02-18", 1},
		{"2026-02-18", "2026-02-13", -1},
		// March 2026: 22 weekdays, no holiday.
		{"2026-02-28", "2026-03-31", 22},
		// April 2026: 22 weekdays less Good Friday (3rd) and Tiradentes
		// (21st, a Tuesday).
		{"2026-03-31", "2026-04-30", 20},
		// All of 2026: 261 weekdays (52 weeks and a Thursday) less the 12
		// holidays on a weekday (all but 15 Nov, a Sunday).
		{"2025-12-31", "2026-12-31", 261 - 12},
	}
	for _, tt := range tests {
		if got := bizdays.BusinessDaysBetween(date(tt.a), date(tt.b)); got != tt.want {
			t.Errorf("BusinessDaysBetween(%s, %s) = %d, want %d", tt.a, tt.b, got, tt.want)
		}
	}
}

// No run of non-business days is longer than four, which bounds how far a
// due date can move.
func TestNonBusinessRunsAreShort(t *testing.T) {
	t.Parallel()
	run, longest := 0, 0
	for d := bizdays.MustDate(1900, time.January, 1); d.Year() <= 2600; d = d.AddDays(1) {
		if bizdays.IsBusinessDay(d) {
			run = 0
			continue
		}
		run++
		longest = max(longest, run)
	}
	if longest != 4 {
		t.Errorf("longest run of non-business days = %d, want 4", longest)
	}
}

// FuzzNextBusinessDay: for any day, NextBusinessDay is a business day on or
// after it, at most six days later, and nothing between is a business day.
func FuzzNextBusinessDay(f *testing.F) {
	for _, s := range []int{0, 46067, 46068, 55000, -25000} {
		f.Add(s)
	}
	epoch := bizdays.MustDate(1970, time.January, 1)
	f.Fuzz(func(t *testing.T, offset int) {
		d := epoch.AddDays(offset % 2_900_000)
		if !d.Valid() || d.After(bizdays.MustDate(bizdays.MaxYear, time.December, 20)) {
			return
		}
		n := bizdays.NextBusinessDay(d)
		if !bizdays.IsBusinessDay(n) || n.Before(d) || n.DaysSince(d) > 6 {
			t.Fatalf("NextBusinessDay(%v) = %v", d, n)
		}
		for x := d; x.Before(n); x = x.AddDays(1) {
			if bizdays.IsBusinessDay(x) {
				t.Fatalf("NextBusinessDay(%v) = %v skips business day %v", d, n, x)
			}
		}
		want := 1
		if n == d {
			want = 0
		}
		if got := bizdays.BusinessDaysBetween(d, n); got != want {
			t.Fatalf("BusinessDaysBetween(%v, %v) = %d", d, n, got)
		}
	})
}
