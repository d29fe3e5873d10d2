package domain_test

import (
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

func ymd(y int, m time.Month, d int) bizdays.Date { return bizdays.MustDate(y, m, d) }

// Cycle k falls due k−1 intervals after start_date; a month-based
// interval keeps start_date's day, clamped to the month's last day and
// always counted from start_date (31 Jan → 29 Feb → 31 Mar in a leap year).
func TestCycleDate(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name  string
		start bizdays.Date
		iv    domain.Interval
		k     int
		want  bizdays.Date
	}{
		{"first cycle is the start", ymd(2027, 1, 31), domain.IntervalMonthly, 1, ymd(2027, 1, 31)},
		{"31 Jan to February, common year", ymd(2027, 1, 31), domain.IntervalMonthly, 2, ymd(2027, 2, 28)},
		{"31 Jan to February, leap year", ymd(2028, 1, 31), domain.IntervalMonthly, 2, ymd(2028, 2, 29)},
		{"back to the 31st after February", ymd(2028, 1, 31), domain.IntervalMonthly, 3, ymd(2028, 3, 31)},
		{"30-day month clamps the 31st", ymd(2027, 1, 31), domain.IntervalMonthly, 4, ymd(2027, 4, 30)},
		{"twelfth month", ymd(2027, 1, 31), domain.IntervalMonthly, 12, ymd(2027, 12, 31)},
		{"into the next year", ymd(2027, 1, 31), domain.IntervalMonthly, 13, ymd(2028, 1, 31)},
		{"the 15th stays the 15th", ymd(2027, 3, 15), domain.IntervalMonthly, 11, ymd(2028, 1, 15)},
		{"weekly", ymd(2027, 1, 29), domain.IntervalWeekly, 3, ymd(2027, 2, 12)},
		{"weekly across a year", ymd(2027, 12, 27), domain.IntervalWeekly, 2, ymd(2028, 1, 3)},
		{"quarterly from 30 Nov", ymd(2027, 11, 30), domain.IntervalQuarterly, 2, ymd(2028, 2, 29)},
		{"quarterly keeps the 30th", ymd(2027, 11, 30), domain.IntervalQuarterly, 3, ymd(2028, 5, 30)},
		{"semiannual from 31 Aug", ymd(2027, 8, 31), domain.IntervalSemiannual, 2, ymd(2028, 2, 29)},
		{"semiannual back to the 31st", ymd(2027, 8, 31), domain.IntervalSemiannual, 3, ymd(2028, 8, 31)},
		{"yearly from 29 Feb", ymd(2028, 2, 29), domain.IntervalYearly, 2, ymd(2029, 2, 28)},
		{"yearly 29 Feb again in a leap year", ymd(2028, 2, 29), domain.IntervalYearly, 5, ymd(2032, 2, 29)},
		{"no cycle 0", ymd(2027, 1, 31), domain.IntervalMonthly, 0, bizdays.Date{}},
		{"unknown interval", ymd(2027, 1, 31), domain.Interval("daily"), 1, bizdays.Date{}},
	}
	for _, tc := range tests {
		if got := domain.CycleDate(tc.start, tc.iv, tc.k); got != tc.want {
			t.Errorf("%s: CycleDate(%s, %s, %d) = %s, want %s", tc.name, tc.start, tc.iv, tc.k, got, tc.want)
		}
	}
}

// A subscription's cycles stop at end_date: a cycle due after it is not
// in the schedule.
func TestScheduleStopsAtEndDate(t *testing.T) {
	t.Parallel()
	s := newSub(t, func(p *domain.NewSubscriptionParams) {
		p.StartDate = ymd(2027, 1, 31)
		p.EndDate = ymd(2027, 12, 30)
	})
	for k, want := range map[int]bool{1: true, 11: true, 12: false, 13: false} {
		if got := s.HasCycle(k); got != want {
			t.Errorf("HasCycle(%d) = %v, want %v (cycle 12 falls on 31 Dec, after end_date)", k, got, want)
		}
	}
	open := newSub(t, nil)
	if !open.HasCycle(600) {
		t.Error("without end_date every cycle is in the schedule")
	}
}

// The BCB rule for Pix Automático: a cycle's recurring charge is created
// between 10 and 2 days before its due date, both days included.
func TestWindowIsTenToTwoDaysBeforeTheDueDate(t *testing.T) {
	t.Parallel()
	due := ymd(2027, 3, 15)
	for offset, want := range map[int]bool{-11: false, -10: true, -9: true, -3: true, -2: true, -1: false, 0: false, 1: false} {
		if got := domain.InWindow(due, due.AddDays(offset)); got != want {
			t.Errorf("InWindow(due, due%+d) = %v, want %v", offset, got, want)
		}
	}
	if domain.WindowOpens(due) != ymd(2027, 3, 5) || domain.WindowCloses(due) != ymd(2027, 3, 13) {
		t.Errorf("window %s..%s, want 2027-03-05..2027-03-13", domain.WindowOpens(due), domain.WindowCloses(due))
	}
}

// three_in_seven_days retries on the next business day after each failed
// debit, at most three times and never later than seven days after the
// due date; none never retries.
func TestRetryPolicy(t *testing.T) {
	t.Parallel()
	friday := ymd(2027, 3, 12)
	tests := []struct {
		name    string
		p       domain.RetryPolicy
		due     bizdays.Date
		failed  bizdays.Date
		retries int
		want    bizdays.Date
		ok      bool
	}{
		{"none never retries", domain.RetryNone, friday, friday, 0, bizdays.Date{}, false},
		{"first retry on the next business day (Monday)", domain.RetryThreeInSevenDays, friday, friday, 0, ymd(2027, 3, 15), true},
		{"second retry", domain.RetryThreeInSevenDays, friday, ymd(2027, 3, 15), 1, ymd(2027, 3, 16), true},
		{"third retry", domain.RetryThreeInSevenDays, friday, ymd(2027, 3, 16), 2, ymd(2027, 3, 17), true},
		{"no fourth retry", domain.RetryThreeInSevenDays, friday, ymd(2027, 3, 17), 3, bizdays.Date{}, false},
		{"the seventh day is the last", domain.RetryThreeInSevenDays, friday, ymd(2027, 3, 18), 1, ymd(2027, 3, 19), true},
		{"never past seven days", domain.RetryThreeInSevenDays, friday, ymd(2027, 3, 19), 1, bizdays.Date{}, false},
		{"a holiday is skipped (Good Friday 2027-03-26)", domain.RetryThreeInSevenDays, ymd(2027, 3, 25), ymd(2027, 3, 25), 0, ymd(2027, 3, 29), true},
	}
	for _, tc := range tests {
		got, ok := tc.p.NextRetryDate(tc.due, tc.failed, tc.retries)
		if got != tc.want || ok != tc.ok {
			t.Errorf("%s: NextRetryDate = %s %v, want %s %v", tc.name, got, ok, tc.want, tc.ok)
		}
	}
	if got := domain.RetryThreeInSevenDays.LastDebitDate(friday); got != ymd(2027, 3, 19) {
		t.Errorf("last debit day under three_in_seven_days %s, want due + 7", got)
	}
	if got := domain.RetryNone.LastDebitDate(ymd(2027, 3, 13)); got != ymd(2027, 3, 15) {
		t.Errorf("last debit day under none %s, want the first debit's (Saturday moves to Monday)", got)
	}
}

// Every merchant value maps to one value of the API Pix.
func TestSubscriptionVocabularyMapsToTheAPIPix(t *testing.T) {
	t.Parallel()
	for iv, want := range map[domain.Interval]string{domain.IntervalWeekly: "SEMANAL", domain.IntervalMonthly: "MENSAL",
		domain.IntervalQuarterly: "TRIMESTRAL", domain.IntervalSemiannual: "SEMESTRAL", domain.IntervalYearly: "ANUAL"} {
		if got := iv.Periodicidade(); got != want {
			t.Errorf("%s → %s, want %s", iv, got, want)
		}
	}
	for p, want := range map[domain.RetryPolicy]string{domain.RetryNone: "NAO_PERMITE", domain.RetryThreeInSevenDays: "PERMITE_3R_7D"} {
		if got := p.PoliticaRetentativa(); got != want {
			t.Errorf("%s → %s, want %s", p, got, want)
		}
	}
	for j, want := range map[domain.Journey]string{domain.JourneyAuthorizationRequest: "JORNADA_1", domain.JourneyQRCode: "JORNADA_2",
		domain.JourneyQRCodeWithFirstPayment: "JORNADA_3"} {
		if got := j.Jornada(); got != want {
			t.Errorf("%s → %s, want %s", j, got, want)
		}
	}
	for s, want := range map[domain.SubscriptionStatus]domain.RecStatus{
		domain.SubscriptionPendingAuthorization: domain.RecCreated, domain.SubscriptionActive: domain.RecApproved,
		domain.SubscriptionRejected: domain.RecRejected, domain.SubscriptionExpired: domain.RecExpired,
		domain.SubscriptionCancelled: domain.RecCancelled, domain.SubscriptionCompleted: domain.RecApproved,
	} {
		if got := s.RecStatus(); got != want {
			t.Errorf("%s → rec %s, want %s", s, got, want)
		}
	}
}
