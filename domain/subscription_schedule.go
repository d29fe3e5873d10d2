package domain

import (
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// Interval is how often a subscription's cycles fall due. The values are
// API strings: add, never rename. Each is one of the API Pix's
// periodicidade values (Periodicidade).
type Interval string

// Intervals.
const (
	IntervalWeekly     Interval = "weekly"
	IntervalMonthly    Interval = "monthly"
	IntervalQuarterly  Interval = "quarterly"
	IntervalSemiannual Interval = "semiannual"
	IntervalYearly     Interval = "yearly"
)

// intervals maps each interval to its API Pix periodicidade and its length
// in months (0: a week).
var intervals = map[Interval]struct {
	periodicidade string
	months        int
}{
	IntervalWeekly:     {"SEMANAL", 0},
	IntervalMonthly:    {"MENSAL", 1},
	IntervalQuarterly:  {"TRIMESTRAL", 3},
	IntervalSemiannual: {"SEMESTRAL", 6},
	IntervalYearly:     {"ANUAL", 12},
}

// Valid reports whether i is an interval.
func (i Interval) Valid() bool { _, ok := intervals[i]; return ok }

// Periodicidade is the interval as the API Pix's rec.calendario.periodicidade.
func (i Interval) Periodicidade() string { return intervals[i].periodicidade }

// CycleDate is the due date of cycle k (1 is the first) of a schedule that
// starts on start: start plus k−1 intervals. A month-based interval keeps
// the day of the month of start, clamped to the month's last day, and
// always counts from start, never from the clamped date before it: a
// monthly schedule from 31 January falls due on 28 (or 29) February, then
// on 31 March. k below 1 has no date (the zero Date).
func CycleDate(start bizdays.Date, i Interval, k int) bizdays.Date {
	if k < 1 || start.IsZero() || !i.Valid() {
		return bizdays.Date{}
	}
	iv := intervals[i]
	if iv.months == 0 {
		return start.AddDays(7 * (k - 1))
	}
	months := int(start.Month()) - 1 + iv.months*(k-1)
	year, month := start.Year()+months/12, time.Month(months%12+1)
	day := min(start.Day(), daysIn(year, month))
	d, err := bizdays.NewDate(year, month, day)
	if err != nil {
		return bizdays.Date{} // past bizdays.MaxYear: no such day
	}
	return d
}

// daysIn is the number of days of month in year.
func daysIn(year int, month time.Month) int {
	return time.Date(year, month+1, 0, 0, 0, 0, 0, time.UTC).Day()
}

// The window of Pix Automático: a cycle's recurring charge (the API Pix's
// cobr) must reach the payer's bank between 10 and 2 days before its due
// date, so Quita creates it inside that window and never outside it.
const (
	// WindowOpensDays: the earliest a cycle's charge is created, in days
	// before its due date.
	WindowOpensDays = 10
	// WindowClosesDays: the latest, in days before its due date. It is
	// also how far ahead of today a subscription's start_date must be.
	WindowClosesDays = 2
)

// WindowOpens is the first day on which the charge of a cycle due on due
// may be created.
func WindowOpens(due bizdays.Date) bizdays.Date { return due.AddDays(-WindowOpensDays) }

// WindowCloses is the last day on which the charge of a cycle due on due
// may be created.
func WindowCloses(due bizdays.Date) bizdays.Date { return due.AddDays(-WindowClosesDays) }

// InWindow reports whether today (in Brasília) is inside the creation
// window of a cycle due on due: from 10 to 2 days before it, both
// included.
func InWindow(due, today bizdays.Date) bool {
	return !today.Before(WindowOpens(due)) && !today.After(WindowCloses(due))
}

// RetryPolicy says whether a cycle's failed debit is tried again. The
// values are API strings: add, never rename.
type RetryPolicy string

// Retry policies.
const (
	// RetryNone: one debit on the due date (NAO_PERMITE).
	RetryNone RetryPolicy = "none"
	// RetryThreeInSevenDays: after a failed debit, up to three more, each
	// on a later business day, none after the seventh day past the due
	// date (PERMITE_3R_7D).
	RetryThreeInSevenDays RetryPolicy = "three_in_seven_days"
)

// retryPolicies maps each policy to its API Pix politicaRetentativa, the
// retries it allows and the days after the due date they must fall in.
var retryPolicies = map[RetryPolicy]struct {
	politica string
	retries  int
	days     int
}{
	RetryNone:             {"NAO_PERMITE", 0, 0},
	RetryThreeInSevenDays: {"PERMITE_3R_7D", 3, 7},
}

// Valid reports whether p is a retry policy.
func (p RetryPolicy) Valid() bool { _, ok := retryPolicies[p]; return ok }

// PoliticaRetentativa is the policy as the API Pix's politicaRetentativa.
func (p RetryPolicy) PoliticaRetentativa() string { return retryPolicies[p].politica }

// MaxRetries is how many debits the policy allows after the first.
func (p RetryPolicy) MaxRetries() int { return retryPolicies[p].retries }

// RetryDays is how many days after the due date the last retry may fall.
func (p RetryPolicy) RetryDays() int { return retryPolicies[p].days }

// FirstDebitDate is the day a cycle due on due is first debited: the due
// date, moved to the next business day when it is not one (the cobr's
// ajusteDiaUtil, national holidays only, as bizdays counts them).
func FirstDebitDate(due bizdays.Date) bizdays.Date { return bizdays.NextBusinessDay(due) }

// NextRetryDate is the day of the retry after a debit on failed failed,
// for a cycle due on due under p: the next business day after failed,
// provided retries (those already made) is below the policy's and that
// day is no later than RetryDays after due. ok is false when no retry is
// allowed.
func (p RetryPolicy) NextRetryDate(due, failed bizdays.Date, retries int) (bizdays.Date, bool) {
	if retries >= p.MaxRetries() {
		return bizdays.Date{}, false
	}
	next := bizdays.NextBusinessDay(failed.AddDays(1))
	if next.After(due.AddDays(p.RetryDays())) {
		return bizdays.Date{}, false
	}
	return next, true
}

// LastDebitDate is the last day a cycle due on due may be debited under
// p: its first debit's day, or the last day retries may fall on. A
// cycle's charge is payable until the end of it in Brasília.
func (p RetryPolicy) LastDebitDate(due bizdays.Date) bizdays.Date {
	first := FirstDebitDate(due)
	if last := due.AddDays(p.RetryDays()); p.MaxRetries() > 0 && last.After(first) {
		return last
	}
	return first
}

// Journey is how the payer authorises a subscription's mandate. The values
// are API strings: add, never rename.
type Journey string

// Journeys.
const (
	// JourneyAuthorizationRequest: Quita asks the payer's bank to show the
	// payer a request to authorise (the API Pix's solicrec, JORNADA_1).
	JourneyAuthorizationRequest Journey = "authorization_request"
	// JourneyQRCode: the payer scans a recurrence QR code (JORNADA_2).
	JourneyQRCode Journey = "qr_code"
	// JourneyQRCodeWithFirstPayment: the payer scans a composite QR code,
	// pays an immediate first payment and authorises the mandate
	// (JORNADA_3).
	JourneyQRCodeWithFirstPayment Journey = "qr_code_with_first_payment"
)

var journeys = map[Journey]string{
	JourneyAuthorizationRequest:   "JORNADA_1",
	JourneyQRCode:                 "JORNADA_2",
	JourneyQRCodeWithFirstPayment: "JORNADA_3",
}

// Valid reports whether j is a journey.
func (j Journey) Valid() bool { _, ok := journeys[j]; return ok }

// Jornada is the journey as the API Pix's ativacao.tipoJornada.
func (j Journey) Jornada() string { return journeys[j] }

// QR reports whether the payer authorises by scanning a QR code.
func (j Journey) QR() bool { return j == JourneyQRCode || j == JourneyQRCodeWithFirstPayment }
