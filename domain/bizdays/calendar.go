package bizdays

import "time"

// Easter returns Easter Sunday of year by the anonymous Gregorian computus
// (Meeus/Jones/Butcher), exact for every Gregorian year.
func Easter(year int) Date {
	a := year % 19
	b, c := year/100, year%100
	d, e := b/4, b%4
	f := (b + 8) / 25
	g := (b - f + 1) / 3
	h := (19*a + b - d - g + 15) % 30
	i, k := c/4, c%4
	l := (32 + 2*e + 2*i - h - k) % 7
	m := (a + 11*h + 22*l) / 451
	month := (h + l - 7*m + 114) / 31
	day := (h+l-7*m+114)%31 + 1
	return Date{t: time.Date(year, time.Month(month), day, 0, 0, 0, 0, time.UTC)}
}

// Holiday is one day on which banks do not open.
type Holiday struct {
	Date Date
	Name string
}

// fixedHoliday is a holiday on the same day every year, from year From on.
type fixedHoliday struct {
	month time.Month
	day   int
	name  string
	from  int
}

var fixedHolidays = []fixedHoliday{
	{time.January, 1, "Confraternização Universal", 0},
	{time.April, 21, "Tiradentes", 0},
	{time.May, 1, "Dia do Trabalho", 0},
	{time.September, 7, "Independência do Brasil", 0},
	{time.October, 12, "Nossa Senhora Aparecida", 0},
	{time.November, 2, "Finados", 0},
	{time.November, 15, "Proclamação da República", 0},
	// Lei 14.759/2023 made it national from the year after.
	{time.November, 20, "Dia Nacional de Zumbi e da Consciência Negra", 2024},
	{time.December, 25, "Natal", 0},
}

// easterHolidays are the holidays a fixed number of days from Easter.
var easterHolidays = []struct {
	offset int
	name   string
}{
	{-48, "Carnaval (segunda-feira)"},
	{-47, "Carnaval (terça-feira)"},
	{-2, "Paixão de Cristo"},
	{60, "Corpus Christi"},
}

// Holidays returns the bank holidays of year in date order, including those
// that fall on a Saturday or Sunday. It returns nil for a year outside
// MinYear..MaxYear.
func Holidays(year int) []Holiday {
	if year < MinYear || year > MaxYear {
		return nil
	}
	out := make([]Holiday, 0, len(fixedHolidays)+len(easterHolidays))
	for _, h := range fixedHolidays {
		if year >= h.from {
			out = append(out, Holiday{MustDate(year, h.month, h.day), h.name})
		}
	}
	easter := Easter(year)
	for _, h := range easterHolidays {
		out = append(out, Holiday{easter.AddDays(h.offset), h.name})
	}
	// Insertion sort: fifteen entries, and the Easter days land among the
	// fixed ones differently every year.
	for i := 1; i < len(out); i++ {
		for j := i; j > 0 && out[j].Date.Before(out[j-1].Date); j-- {
			out[j], out[j-1] = out[j-1], out[j]
		}
	}
	return out
}

// HolidayName returns the name of the bank holiday on d, or "" and false
// when d is none (a weekend is not a holiday by itself).
func HolidayName(d Date) (string, bool) {
	if !d.Valid() {
		return "", false
	}
	for _, h := range fixedHolidays {
		if d.Month() == h.month && d.Day() == h.day && d.Year() >= h.from {
			return h.name, true
		}
	}
	// Every Easter holiday falls between February and June.
	if m := d.Month(); m >= time.February && m <= time.June {
		off := d.DaysSince(Easter(d.Year()))
		for _, h := range easterHolidays {
			if off == h.offset {
				return h.name, true
			}
		}
	}
	return "", false
}

// IsHoliday reports whether d is a bank holiday.
func IsHoliday(d Date) bool {
	_, ok := HolidayName(d)
	return ok
}

// IsBusinessDay reports whether banks open on d: a Monday to Friday that is
// not a holiday. An invalid or zero Date is not a business day.
func IsBusinessDay(d Date) bool {
	if !d.Valid() {
		return false
	}
	if wd := d.Weekday(); wd == time.Saturday || wd == time.Sunday {
		return false
	}
	return !IsHoliday(d)
}

// NextBusinessDay returns d itself when it is a business day, otherwise the
// first business day after it: the rule that moves a due date falling on a
// weekend or holiday. No run of non-business days is longer than four
// (Carnival's Saturday to Tuesday; Tiradentes on the Thursday before Good
// Friday to Sunday), so the answer is at most four days after d. The result may be past MaxYear-12-31 for a d in
// its last days; it is then not Valid.
func NextBusinessDay(d Date) Date {
	if !d.Valid() {
		return d
	}
	for !IsBusinessDay(d) && d.Year() <= MaxYear {
		d = d.AddDays(1)
	}
	return d
}

// AddBusinessDays returns the n-th business day after d (n ≥ 0); n = 0
// returns NextBusinessDay(d).
func AddBusinessDays(d Date, n int) Date {
	d = NextBusinessDay(d)
	for ; n > 0 && d.Valid(); n-- {
		d = NextBusinessDay(d.AddDays(1))
	}
	return d
}

// BusinessDaysBetween counts the business days after a up to and including
// b: the business days a payment made on b is late when the charge was due
// on a, or early when made on a for a charge due on b. It is 0 when a == b
// and negative (the same count, negated) when b is before a.
func BusinessDaysBetween(a, b Date) int {
	if b.Before(a) {
		return -BusinessDaysBetween(b, a)
	}
	n := 0
	for d := a.AddDays(1); !d.After(b); d = d.AddDays(1) {
		if IsBusinessDay(d) {
			n++
		}
	}
	return n
}
