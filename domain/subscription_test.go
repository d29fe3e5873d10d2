package domain_test

import (
	"errors"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// subT0 is noon in Brasília, three weeks before the test subscriptions'
// first cycle.
var subT0 = time.Date(2027, 1, 10, 15, 0, 0, 0, time.UTC)

var subIDs = newIDSource()

type idSource struct{ n atomic.Int64 }

func newIDSource() *idSource { return &idSource{} }

// raw makes distinct raw ids (35 characters of [a-z2-7]), from any
// goroutine.
func (s *idSource) raw() string {
	const alphabet = "234567abcdefghijklmnopqrstuvwxyz"
	b := []byte(strings.Repeat("a", domain.RawIDLen))
	for i, n := len(b)-1, s.n.Add(1); n > 0; i, n = i-1, n/32 {
		b[i] = alphabet[n%32]
	}
	return string(b)
}

func i64(v int64) *int64 { return &v }

// newSub is a monthly R$ 49.90 subscription whose first cycle falls due
// on the last day of subT0's month, created at subT0, changed by edit.
func newSub(t testing.TB, edit func(*domain.NewSubscriptionParams)) *domain.Subscription {
	t.Helper()
	p := domain.NewSubscriptionParams{
		ID: subIDs.raw(), AccountID: "acct_1", Mode: domain.ModeTest,
		Customer: domain.Customer{Name: "Maria Silva", Document: "529.982.247-25"},
		Amount:   i64(4990), Interval: domain.IntervalMonthly, StartDate: ymd(2027, 1, 31),
		Contract: "CTR-1", Description: "Plano mensal", Now: subT0,
	}
	if edit != nil {
		edit(&p)
	}
	s, err := domain.NewSubscription(p)
	if err != nil {
		t.Fatalf("NewSubscription: %v", err)
	}
	return s
}

func attach(t testing.TB, s *domain.Subscription) {
	t.Helper()
	m := domain.Mandate{RecID: "RN9999999920270110abcdefghijk", SolicRecID: "SC9999999920270110abcdefghijk",
		SolicRecStatus: domain.SolicRecSent, BRCode: "000201", Location: "pix.example.com/rec/1"}
	if err := s.AttachMandate(m, subT0); err != nil {
		t.Fatalf("AttachMandate: %v", err)
	}
}

func TestNewSubscriptionDefaults(t *testing.T) {
	t.Parallel()
	s := newSub(t, nil)
	v := s.Snapshot()
	if v.Status != domain.SubscriptionPendingAuthorization || v.RetryPolicy != domain.RetryNone ||
		v.Journey != domain.JourneyAuthorizationRequest || v.NextCycle != 1 {
		t.Errorf("defaults: %+v", v)
	}
	// The mandate must be authorised by the end of the last day cycle 1's
	// charge may be created (two days before start_date), in Brasília.
	if want := domain.EndOfBrasiliaDay(ymd(2027, 1, 29)); !v.AuthorizationExpiresAt.Equal(want) || !v.NextRunAt.Equal(want) {
		t.Errorf("authorization deadline %v (next run %v), want %v", v.AuthorizationExpiresAt, v.NextRunAt, want)
	}
	first := newSub(t, func(p *domain.NewSubscriptionParams) {
		p.Journey, p.FirstPayment = domain.JourneyQRCodeWithFirstPayment, i64(1990)
	})
	if got, want := first.AuthorizationExpiresAt(), subT0.Add(24*time.Hour); !got.Equal(want) {
		t.Errorf("a first payment's subscription must be authorised within its cob's 24 h: %v, want %v", got, want)
	}
}

// Every bad input is a validation error naming its field.
func TestNewSubscriptionValidation(t *testing.T) {
	t.Parallel()
	today := domain.BrasiliaDate(subT0)
	tests := []struct {
		name  string
		edit  func(*domain.NewSubscriptionParams)
		field domain.Field
		code  string
	}{
		{"no customer name", func(p *domain.NewSubscriptionParams) { p.Customer.Name = " " }, domain.FieldCustomerName, domain.CodeParameterMissing},
		{"no document", func(p *domain.NewSubscriptionParams) { p.Customer.Document = "" }, domain.FieldCustomerDocument, domain.CodeParameterMissing},
		{"bad CPF", func(p *domain.NewSubscriptionParams) { p.Customer.Document = "111.111.111-12" }, domain.FieldCustomerDocument, domain.CodeParameterInvalid},
		{"no amount", func(p *domain.NewSubscriptionParams) { p.Amount = nil }, domain.FieldAmount, domain.CodeParameterMissing},
		{"amount and variable", func(p *domain.NewSubscriptionParams) { p.Variable = true }, domain.FieldVariable, domain.CodeParameterInvalid},
		{"zero amount", func(p *domain.NewSubscriptionParams) { p.Amount = i64(0) }, domain.FieldAmount, domain.CodeParameterInvalid},
		{"amount too large", func(p *domain.NewSubscriptionParams) { p.Amount = i64(domain.MaxAmount + 1) }, domain.FieldAmount, domain.CodeParameterInvalid},
		{"max_amount zero", func(p *domain.NewSubscriptionParams) { p.Amount, p.Variable, p.MaxAmount = nil, true, i64(0) }, domain.FieldMaxAmount, domain.CodeParameterInvalid},
		{"no interval", func(p *domain.NewSubscriptionParams) { p.Interval = "" }, domain.FieldInterval, domain.CodeParameterMissing},
		{"daily", func(p *domain.NewSubscriptionParams) { p.Interval = "daily" }, domain.FieldInterval, domain.CodeParameterInvalid},
		{"no start_date", func(p *domain.NewSubscriptionParams) { p.StartDate = bizdays.Date{} }, domain.FieldStartDate, domain.CodeParameterMissing},
		{"start tomorrow", func(p *domain.NewSubscriptionParams) { p.StartDate = today.AddDays(1) }, domain.FieldStartDate, domain.CodeParameterInvalid},
		{"end before start", func(p *domain.NewSubscriptionParams) { p.EndDate = ymd(2027, 1, 30) }, domain.FieldEndDate, domain.CodeParameterInvalid},
		{"no contract", func(p *domain.NewSubscriptionParams) { p.Contract = "" }, domain.FieldContract, domain.CodeParameterMissing},
		{"contract of 36", func(p *domain.NewSubscriptionParams) { p.Contract = strings.Repeat("x", 36) }, domain.FieldContract, domain.CodeParameterInvalid},
		{"contract with a control", func(p *domain.NewSubscriptionParams) { p.Contract = "a\u202eb" }, domain.FieldContract, domain.CodeParameterInvalid},
		{"description of 36", func(p *domain.NewSubscriptionParams) { p.Description = strings.Repeat("x", 36) }, domain.FieldDescription, domain.CodeParameterInvalid},
		{"retry policy", func(p *domain.NewSubscriptionParams) { p.RetryPolicy = "always" }, domain.FieldRetryPolicy, domain.CodeParameterInvalid},
		{"journey", func(p *domain.NewSubscriptionParams) { p.Journey = "JORNADA_4" }, domain.FieldJourney, domain.CodeParameterInvalid},
		{"first payment missing", func(p *domain.NewSubscriptionParams) { p.Journey = domain.JourneyQRCodeWithFirstPayment }, domain.FieldFirstPayment, domain.CodeParameterMissing},
		{"first payment without its journey", func(p *domain.NewSubscriptionParams) { p.FirstPayment = i64(100) }, domain.FieldFirstPayment, domain.CodeParameterInvalid},
		{"first payment zero", func(p *domain.NewSubscriptionParams) {
			p.Journey, p.FirstPayment = domain.JourneyQRCodeWithFirstPayment, i64(0)
		}, domain.FieldFirstPayment, domain.CodeParameterInvalid},
		{"payer account with a QR journey", func(p *domain.NewSubscriptionParams) {
			p.Journey, p.PayerAccount = domain.JourneyQRCode, &domain.PayerAccount{ISPB: "99999997", Branch: "1", Number: "1"}
		}, domain.FieldPayerAccount, domain.CodeParameterInvalid},
		{"payer ISPB missing", payerAccount("", "0001", "12345"), domain.FieldPayerISPB, domain.CodeParameterMissing},
		{"payer ISPB lowercase", payerAccount("9999999a", "0001", "12345"), domain.FieldPayerISPB, domain.CodeParameterInvalid},
		{"payer ISPB of 9", payerAccount("999999970", "0001", "12345"), domain.FieldPayerISPB, domain.CodeParameterInvalid},
		{"payer branch missing", payerAccount("99999997", "", "12345"), domain.FieldPayerBranch, domain.CodeParameterMissing},
		{"payer branch of 5", payerAccount("99999997", "00011", "12345"), domain.FieldPayerBranch, domain.CodeParameterInvalid},
		{"payer branch with a letter", payerAccount("99999997", "00X1", "12345"), domain.FieldPayerBranch, domain.CodeParameterInvalid},
		{"payer number missing", payerAccount("99999997", "0001", " "), domain.FieldPayerNumber, domain.CodeParameterMissing},
		{"payer number of 21", payerAccount("99999997", "0001", strings.Repeat("1", 21)), domain.FieldPayerNumber, domain.CodeParameterInvalid},
		{"payer number with a dash", payerAccount("99999997", "0001", "1234-5"), domain.FieldPayerNumber, domain.CodeParameterInvalid},
	}
	for _, tc := range tests {
		p := domain.NewSubscriptionParams{ID: subIDs.raw(), AccountID: "acct_1", Mode: domain.ModeTest,
			Customer: domain.Customer{Name: "Maria", Document: "52998224725"}, Amount: i64(100), Interval: domain.IntervalMonthly,
			StartDate: ymd(2027, 1, 31), Contract: "C", Now: subT0}
		tc.edit(&p)
		_, err := domain.NewSubscription(p)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != tc.field || ve.Code != tc.code {
			t.Errorf("%s: err %v, want %s %s", tc.name, err, tc.code, tc.field)
		}
	}
}

func payerAccount(ispb, branch, number string) func(*domain.NewSubscriptionParams) {
	return func(p *domain.NewSubscriptionParams) {
		p.PayerAccount = &domain.PayerAccount{ISPB: ispb, Branch: branch, Number: number}
	}
}

// A payer's account is kept as given (trimmed) and shown by its number's
// last four digits only.
func TestSubscriptionPayerAccount(t *testing.T) {
	t.Parallel()
	p := domain.NewSubscriptionParams{ID: subIDs.raw(), AccountID: "acct_1", Mode: domain.ModeLive,
		Customer: domain.Customer{Name: "Maria", Document: "52998224725"}, Amount: i64(100), Interval: domain.IntervalMonthly,
		StartDate: ymd(2027, 1, 31), Contract: "C", Now: subT0,
		PayerAccount: &domain.PayerAccount{ISPB: " 0000000A", Branch: "12", Number: "00012345678 "}}
	s, err := domain.NewSubscription(p)
	if err != nil {
		t.Fatal(err)
	}
	if a := s.PayerAccount(); a == nil || *a != (domain.PayerAccount{ISPB: "0000000A", Branch: "12", Number: "00012345678"}) {
		t.Fatalf("kept %+v", a)
	}
	pub := s.Public(domain.Links{})
	if pub.PayerAcct == nil || *pub.PayerAcct != (domain.PublicPayerAccount{ISPB: "0000000A", Branch: "12", NumberLast4: "5678"}) {
		t.Fatalf("shown %+v", pub.PayerAcct)
	}
	for number, shown := range map[string]string{"1": "", "12": "2", "12345": "2345"} {
		if got := (domain.PayerAccount{Number: number}).LastDigits(); got != shown {
			t.Errorf("LastDigits(%s) = %q, want %q", number, got, shown)
		}
	}
	p.PayerAccount, p.ID = nil, subIDs.raw()
	if s, err := domain.NewSubscription(p); err != nil || s.PayerAccount() != nil || s.Public(domain.Links{}).PayerAcct != nil {
		t.Fatalf("without one: %v", err)
	}
}

// The status table: pending goes to active, rejected, expired or
// cancelled; active to cancelled or completed; the rest are terminal.
func TestSubscriptionTransitions(t *testing.T) {
	t.Parallel()
	deadline := domain.EndOfBrasiliaDay(ymd(2027, 1, 29))
	tests := []struct {
		name   string
		steps  func(s *domain.Subscription) error
		want   domain.SubscriptionStatus
		events []domain.EventType
	}{
		{"authorized", func(s *domain.Subscription) error { return s.Authorize(subT0) }, domain.SubscriptionActive,
			[]domain.EventType{domain.EventSubscriptionAuthorized}},
		{"rejected", func(s *domain.Subscription) error { return s.Reject(subT0) }, domain.SubscriptionRejected,
			[]domain.EventType{domain.EventSubscriptionRejected}},
		{"expired at the deadline", func(s *domain.Subscription) error { return s.ExpireAuthorization(deadline) }, domain.SubscriptionExpired,
			[]domain.EventType{domain.EventSubscriptionExpired}},
		{"cancelled by the merchant while pending", func(s *domain.Subscription) error { return s.Cancel(domain.CancelledByMerchant, subT0) },
			domain.SubscriptionCancelled, []domain.EventType{domain.EventSubscriptionCancelled}},
		{"revoked by the payer while active", func(s *domain.Subscription) error {
			if err := s.Authorize(subT0); err != nil {
				return err
			}
			return s.Cancel(domain.CancelledByPayer, subT0)
		}, domain.SubscriptionCancelled, []domain.EventType{domain.EventSubscriptionCancelled}},
	}
	for _, tc := range tests {
		s := newSub(t, nil)
		attach(t, s)
		if err := tc.steps(s); err != nil {
			t.Errorf("%s: %v", tc.name, err)
			continue
		}
		if s.Status() != tc.want || s.Mandate().RecStatus != tc.want.RecStatus() {
			t.Errorf("%s: status %s rec %s, want %s", tc.name, s.Status(), s.Mandate().RecStatus, tc.want)
		}
		if got := domain.SubscriptionStatusEvents(domain.SubscriptionPendingAuthorization, s.Status()); len(got) != 1 || got[0] != tc.events[len(tc.events)-1] {
			t.Errorf("%s: events %v", tc.name, got)
		}
	}

	s := newSub(t, nil)
	attach(t, s)
	if err := s.ExpireAuthorization(deadline.Add(-time.Second)); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("expired before the deadline: %v", err)
	}
	if err := s.Authorize(deadline); !errors.Is(err, domain.ErrAuthorizationExpired) {
		t.Errorf("authorised at the deadline: %v", err)
	}
	if err := s.Reject(subT0); err != nil {
		t.Fatal(err)
	}
	if s.Mandate().SolicRecStatus != domain.SolicRecRejected {
		t.Errorf("solicrec %s after a rejection, want REJEITADA", s.Mandate().SolicRecStatus)
	}
	for name, err := range map[string]error{
		"authorize": s.Authorize(subT0), "reject": s.Reject(subT0), "expire": s.ExpireAuthorization(deadline),
		"cancel": s.Cancel(domain.CancelledByMerchant, subT0),
	} {
		if err == nil || s.Status() != domain.SubscriptionRejected {
			t.Errorf("%s of a rejected subscription: %v, status %s", name, err, s.Status())
		}
	}
}

// The next cycle is offered only inside its window, only while active,
// never past end_date; a variable one only with its amount.
func TestNextCycleSpec(t *testing.T) {
	t.Parallel()
	s := newSub(t, func(p *domain.NewSubscriptionParams) { p.EndDate = ymd(2027, 2, 28) })
	attach(t, s)
	due := ymd(2027, 1, 31)
	if _, err := s.NextCycleSpec(due.AddDays(-5), false); !errors.Is(err, domain.ErrSubscriptionNotActive) {
		t.Errorf("pending: %v", err)
	}
	if err := s.Authorize(subT0); err != nil {
		t.Fatal(err)
	}
	for offset, want := range map[int]error{-11: domain.ErrCycleNotInWindow, -10: nil, -2: nil, -1: domain.ErrCycleWindowClosed} {
		if _, err := s.NextCycleSpec(due.AddDays(offset), false); !errors.Is(err, want) {
			t.Errorf("due%+d: %v, want %v", offset, err, want)
		}
	}
	spec, err := s.NextCycleSpec(due.AddDays(-100), true)
	if err != nil || spec.Cycle != 1 || spec.DueDate != due || spec.Amount != 4990 || spec.LastDebit != ymd(2027, 2, 1) {
		t.Errorf("any day: %+v %v (31 Jan 2027 is a Sunday: debited on Monday)", spec, err)
	}
	c := cycleFor(t, s, spec)
	if err := s.CycleScheduled(c, subT0); err != nil {
		t.Fatal(err)
	}
	if err := s.CycleScheduled(c, subT0); !errors.Is(err, domain.ErrCycleMismatch) {
		t.Errorf("the same cycle scheduled twice: %v", err)
	}
	spec, _ = s.NextCycleSpec(ymd(2027, 2, 20), false)
	if spec.Cycle != 2 || spec.DueDate != ymd(2027, 2, 28) {
		t.Errorf("cycle 2: %+v", spec)
	}
	if err := s.CycleScheduled(cycleFor(t, s, spec), subT0); err != nil {
		t.Fatal(err)
	}
	if _, err := s.NextCycleSpec(ymd(2027, 3, 20), true); !errors.Is(err, domain.ErrNoMoreCycles) {
		t.Errorf("past end_date: %v", err)
	}

	v := newSub(t, func(p *domain.NewSubscriptionParams) { p.Amount, p.Variable, p.MaxAmount = nil, true, i64(10000) })
	attach(t, v)
	if err := v.SetNextAmount(5000, ymd(2027, 1, 29), subT0); err != nil {
		t.Errorf("amount set while pending, on the window's last day: %v", err)
	}
	if err := v.Authorize(subT0); err != nil {
		t.Fatal(err)
	}
	if err := v.SetNextAmount(10001, ymd(2027, 1, 20), subT0); !errors.As(err, new(*domain.ValidationError)) {
		t.Errorf("above max_amount: %v", err)
	}
	if err := v.SetNextAmount(100, ymd(2027, 1, 30), subT0); !errors.Is(err, domain.ErrCycleWindowClosed) {
		t.Errorf("after the window: %v", err)
	}
	if spec, err := v.NextCycleSpec(ymd(2027, 1, 25), false); err != nil || spec.Amount != 5000 {
		t.Errorf("variable with its amount: %+v %v", spec, err)
	}
	if err := v.CycleScheduled(cycleFor(t, v, domain.CycleSpec{Cycle: 1, DueDate: ymd(2027, 1, 31), Amount: 5000}), subT0); err != nil {
		t.Fatal(err)
	}
	if _, err := v.NextCycleSpec(ymd(2027, 2, 20), false); !errors.Is(err, domain.ErrCycleAmountNotSet) {
		t.Errorf("variable without its amount: %v", err)
	}
	if err := v.SkipCycle(ymd(2027, 2, 26), subT0); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("skipped inside its window: %v", err)
	}
	if err := v.SkipCycle(ymd(2027, 2, 27), subT0); err != nil || v.NextCycle() != 3 || v.Cycles().Skipped != 1 {
		t.Errorf("skip after the window: %v, next %d, %+v", err, v.NextCycle(), v.Cycles())
	}
	if err := newSub(t, nil).SetNextAmount(100, ymd(2027, 1, 20), subT0); !errors.Is(err, domain.ErrSubscriptionNotVariable) {
		t.Errorf("fixed subscription: %v", err)
	}
}

func cycleFor(t testing.TB, s *domain.Subscription, spec domain.CycleSpec) *domain.Cycle {
	t.Helper()
	c, err := domain.NewCycle(domain.NewCycleParams{SubscriptionID: s.ID(), Cycle: spec.Cycle, AccountID: s.AccountID(), Mode: s.Mode(),
		ChargeID: subIDs.raw(), TxID: domain.CycleTxID(s.AccountID(), s.Mode(), s.ID(), spec.Cycle), DueDate: spec.DueDate,
		Amount: spec.Amount, Policy: s.RetryPolicy(), Now: subT0})
	if err != nil {
		t.Fatalf("NewCycle: %v", err)
	}
	return c
}

// A subscription completes when its last cycle closes, not before.
func TestSubscriptionCompletesAfterItsLastCycle(t *testing.T) {
	t.Parallel()
	s := newSub(t, func(p *domain.NewSubscriptionParams) { p.EndDate = ymd(2027, 2, 28) })
	attach(t, s)
	if err := s.Authorize(subT0); err != nil {
		t.Fatal(err)
	}
	var cycles []*domain.Cycle
	for range 2 {
		spec, err := s.NextCycleSpec(ymd(2027, 1, 25), true)
		if err != nil {
			t.Fatal(err)
		}
		c := cycleFor(t, s, spec)
		if err := s.CycleScheduled(c, subT0); err != nil {
			t.Fatal(err)
		}
		cycles = append(cycles, c)
	}
	if err := cycles[1].Paid("E1", subT0); err != nil {
		t.Fatal(err)
	}
	if s.CycleClosed(cycles[1], subT0) {
		t.Error("completed with cycle 1 still open")
	}
	if _, err := cycles[0].DebitFailed("AM04", subT0); err != nil {
		t.Fatal(err)
	}
	if !s.CycleClosed(cycles[0], subT0) || s.Status() != domain.SubscriptionCompleted {
		t.Errorf("not completed after the last cycle closed: %s", s.Status())
	}
	if c := s.Cycles(); c.Paid != 1 || c.Failed != 1 || c.Open != 0 {
		t.Errorf("counts %+v", c)
	}
	pub := s.Public(domain.Links{})
	if pub.LatestCycle == nil || pub.LatestCycle.Cycle != 1 || pub.LatestCycle.Status != domain.CycleFailed ||
		pub.LatestCycle.FailureCode == nil || *pub.LatestCycle.FailureCode != "AM04" || pub.NextCycle != nil || pub.Ended == nil {
		t.Errorf("public after completion: %+v", pub)
	}
}

// The cobr's state machine: a failed debit is retried within the policy,
// and the cycle is rejected once no retry is left.
func TestCycleDebits(t *testing.T) {
	t.Parallel()
	s := newSub(t, func(p *domain.NewSubscriptionParams) { p.RetryPolicy = domain.RetryThreeInSevenDays })
	c := cycleFor(t, s, domain.CycleSpec{Cycle: 1, DueDate: ymd(2027, 3, 12), Amount: 4990})
	if c.Status() != domain.CobRCreated || c.PublicStatus() != domain.CycleScheduled {
		t.Fatalf("new cycle %s %s", c.Status(), c.PublicStatus())
	}
	if err := c.Activate(subT0); err != nil || c.Status() != domain.CobRActive {
		t.Fatalf("activate: %v %s", err, c.Status())
	}
	if a, _ := c.PendingDebit(); a.Status != domain.AttemptScheduled || a.Kind != domain.AttemptOnDueDate || a.Date != ymd(2027, 3, 12) {
		t.Errorf("first debit %+v", a)
	}
	wantDates := []bizdays.Date{ymd(2027, 3, 15), ymd(2027, 3, 16), ymd(2027, 3, 17)}
	for i, want := range wantDates {
		retry, err := c.DebitFailed("AM04", subT0)
		if err != nil || !retry {
			t.Fatalf("failure %d: retry %v err %v", i+1, retry, err)
		}
		if a, _ := c.PendingDebit(); a.Date != want || a.Kind != domain.AttemptRetry {
			t.Errorf("retry %d on %s (%s), want %s", i+1, a.Date, a.Kind, want)
		}
		if c.PublicStatus() != domain.CycleRetrying {
			t.Errorf("after failure %d: %s", i+1, c.PublicStatus())
		}
	}
	retry, err := c.DebitFailed("AM04", subT0)
	if err != nil || retry || c.Status() != domain.CobRRejected || c.Retries() != 3 || len(c.Attempts()) != 4 {
		t.Errorf("fourth failure: retry %v err %v status %s retries %d", retry, err, c.Status(), c.Retries())
	}
	for name, err := range map[string]error{"paid": c.Paid("E", subT0), "cancel": c.Cancel(subT0), "expire": c.Expire(subT0)} {
		if !errors.Is(err, domain.ErrCycleClosed) || c.Status() != domain.CobRRejected {
			t.Errorf("%s after rejection: %v %s", name, err, c.Status())
		}
	}

	paid := cycleFor(t, s, domain.CycleSpec{Cycle: 2, DueDate: ymd(2027, 4, 12), Amount: 4990})
	if _, err := paid.DebitFailed("", subT0); err != nil {
		t.Fatal(err)
	}
	if err := paid.Paid("E99999999202704131200abcdefghijk", subT0); err != nil || paid.PublicStatus() != domain.CyclePaid {
		t.Errorf("paid on retry: %v %s", err, paid.PublicStatus())
	}
	atts := paid.Attempts()
	if len(atts) != 2 || atts[0].Status != domain.AttemptRejected || atts[1].Status != domain.AttemptPaid || atts[1].EndToEndID == "" {
		t.Errorf("attempts %+v", atts)
	}

	none := cycleFor(t, newSub(t, nil), domain.CycleSpec{Cycle: 1, DueDate: ymd(2027, 3, 12), Amount: 4990})
	if retry, err := none.DebitFailed("", subT0); retry || err != nil || none.Status() != domain.CobRRejected {
		t.Errorf("none: retry %v err %v status %s", retry, err, none.Status())
	}
	if tx := domain.CycleTxID("acct_1", domain.ModeTest, "s", 1); tx != domain.CycleTxID("acct_1", domain.ModeTest, "s", 1) ||
		tx == domain.CycleTxID("acct_1", domain.ModeTest, "s", 2) || !domain.ValidTxID(tx) {
		t.Errorf("cycle txids must be derived, distinct per cycle and valid: %s", tx)
	}
}

// A cycle's charge is a Pix charge payable until the end of its last
// debit day, showing its subscription and no QR image.
func TestCycleChargeLink(t *testing.T) {
	t.Parallel()
	sub := subIDs.raw()
	link := &domain.ChargeSubscription{ID: sub, Cycle: 2, DueDate: ymd(2027, 2, 28)}
	until := domain.EndOfBrasiliaDay(ymd(2027, 3, 1))
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Subscription, p.ExpiresAt = link, until
		p.Customer = domain.Customer{Name: "Maria", Document: "52998224725"}
	})
	if !c.ExpiresAt().Equal(until) {
		t.Errorf("expires_at %v, want %v", c.ExpiresAt(), until)
	}
	if err := c.AttachPix(domain.PixDetails{TxID: domain.CycleTxID("a", domain.ModeTest, sub, 2)}, "sandbox", "", subT0); err != nil {
		t.Fatal(err)
	}
	pub := c.Public(domain.Links{CheckoutBase: "https://pay.example.com"})
	if pub.Subscription == nil || pub.Subscription.ID != "sub_"+sub || *pub.Subscription.Cycle != 2 ||
		*pub.Subscription.DueDate != "2027-02-28" || pub.Pix == nil || pub.Pix.QRCodeURL != "" {
		t.Errorf("public: %+v %+v", pub.Subscription, pub.Pix)
	}
	for name, edit := range map[string]func(*domain.NewChargeParams){
		"expires_in": func(p *domain.NewChargeParams) { p.ExpiresIn = i64(600) },
		"no expiry":  func(p *domain.NewChargeParams) { p.ExpiresAt = time.Time{} },
		"boleto":     func(p *domain.NewChargeParams) { p.Methods = []domain.Method{domain.MethodBoleto} },
		"no due date for a cycle": func(p *domain.NewChargeParams) {
			p.Subscription = &domain.ChargeSubscription{ID: sub, Cycle: 1}
		},
	} {
		p := domain.NewChargeParams{ID: subIDs.raw(), AccountID: "acct_1", Mode: domain.ModeTest, Amount: 100, Currency: "BRL",
			Methods: []domain.Method{domain.MethodPix}, Subscription: link, ExpiresAt: until, Now: subT0}
		edit(&p)
		if _, err := domain.NewCharge(p); !errors.As(err, new(*domain.ValidationError)) {
			t.Errorf("%s: %v", name, err)
		}
	}
}
