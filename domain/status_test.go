package domain_test

import (
	"slices"
	"testing"

	"github.com/quitapix/quita/domain"
)

// statusSpecMapping is the spec's "Transaction status and its public
// mapping" table, row by row.
var statusSpecMapping = []struct {
	tx     domain.TxStatus
	public domain.Status
}{
	{"PENDING", "pending"},
	{"WAITING_PAYMENT", "pending"},
	{"PROCESSING", "processing"},
	{"PAID", "paid"},
	{"APPROVED", "paid"},
	{"REFUSED", "failed"},
	{"CANCELLED", "cancelled"},
	{"EXPIRED", "expired"},
	{"REFUNDED", "refunded"},
	{"CHARGEBACK", "disputed"},
	{"DISPUTE", "disputed"},
}

func TestTxStatusPublicIsTheSpecTable(t *testing.T) {
	t.Parallel()
	for _, row := range statusSpecMapping {
		if got := row.tx.Public(); got != row.public {
			t.Errorf("%s.Public() = %q, want %q", row.tx, got, row.public)
		}
	}
	if len(domain.TxStatuses) != len(statusSpecMapping) {
		t.Errorf("TxStatuses has %d values, the spec table %d", len(domain.TxStatuses), len(statusSpecMapping))
	}
	for _, row := range statusSpecMapping {
		if !slices.Contains(domain.TxStatuses, row.tx) {
			t.Errorf("TxStatuses lacks %s", row.tx)
		}
	}
}

func TestTxStatusPublicPanicsOnUnknown(t *testing.T) {
	t.Parallel()
	for _, s := range []domain.TxStatus{"", "paid", "SETTLED"} {
		func() {
			defer func() {
				if recover() == nil {
					t.Errorf("TxStatus(%q).Public() did not panic", s)
				}
			}()
			_ = s.Public()
		}()
	}
}

func TestStatusTxStatuses(t *testing.T) {
	t.Parallel()
	tests := []struct {
		public domain.Status
		want   []domain.TxStatus
	}{
		{domain.StatusPending, []domain.TxStatus{domain.TxPending, domain.TxWaitingPayment}},
		{domain.StatusProcessing, []domain.TxStatus{domain.TxProcessing}},
		{domain.StatusPaid, []domain.TxStatus{domain.TxPaid, domain.TxApproved}},
		{domain.StatusFailed, []domain.TxStatus{domain.TxRefused}},
		{domain.StatusCancelled, []domain.TxStatus{domain.TxCancelled}},
		{domain.StatusExpired, []domain.TxStatus{domain.TxExpired}},
		{domain.StatusRefunded, []domain.TxStatus{domain.TxRefunded}},
		{domain.StatusDisputed, []domain.TxStatus{domain.TxChargeback, domain.TxDispute}},
		{"PAID", nil},
		{"", nil},
	}
	for _, tt := range tests {
		got := slices.Clone(tt.public.TxStatuses())
		slices.Sort(got)
		want := slices.Clone(tt.want)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Errorf("Status(%q).TxStatuses() = %v, want %v", tt.public, got, want)
		}
	}
	if len(tests)-2 != len(domain.Statuses) {
		t.Errorf("the table covers %d public statuses, Statuses has %d", len(tests)-2, len(domain.Statuses))
	}
}

func TestStatusValid(t *testing.T) {
	t.Parallel()
	for _, row := range statusSpecMapping {
		if !row.tx.Valid() {
			t.Errorf("TxStatus(%q).Valid() = false", row.tx)
		}
		if !row.public.Valid() {
			t.Errorf("Status(%q).Valid() = false", row.public)
		}
	}
	for _, s := range []string{"", "paid", "PAYED", "WAITING", "pending ", "disputed_"} {
		if domain.TxStatus(s).Valid() {
			t.Errorf("TxStatus(%q).Valid() = true", s)
		}
	}
	for _, s := range []string{"", "PAID", "PENDING", "waiting_payment", "canceled", "dispute"} {
		if domain.Status(s).Valid() {
			t.Errorf("Status(%q).Valid() = true", s)
		}
	}
}

func TestStatusPredicates(t *testing.T) {
	t.Parallel()
	open := []domain.TxStatus{domain.TxPending, domain.TxWaitingPayment}
	settled := []domain.TxStatus{domain.TxPaid, domain.TxApproved}
	terminal := []domain.TxStatus{domain.TxRefused, domain.TxCancelled, domain.TxExpired, domain.TxRefunded, domain.TxChargeback}
	for _, s := range domain.TxStatuses {
		if got, want := s.Open(), slices.Contains(open, s); got != want {
			t.Errorf("%s.Open() = %v, want %v", s, got, want)
		}
		if got, want := s.Settled(), slices.Contains(settled, s); got != want {
			t.Errorf("%s.Settled() = %v, want %v", s, got, want)
		}
		if got, want := s.Terminal(), slices.Contains(terminal, s); got != want {
			t.Errorf("%s.Terminal() = %v, want %v", s, got, want)
		}
	}
}

// statusAllowed is the transition table written out independently of the
// code: the spec's rows (create → WAITING_PAYMENT; cancel from
// WAITING_PAYMENT, PENDING and PROCESSING; full refund of PAID/APPROVED) and
// the design's (payer-lock outcomes of a Pix payment, card disputes, a
// full refund completing during a dispute).
var statusAllowed = map[domain.TxStatus][]domain.TxStatus{
	domain.TxPending:        {domain.TxWaitingPayment, domain.TxProcessing, domain.TxPaid, domain.TxApproved, domain.TxRefused, domain.TxCancelled, domain.TxExpired, domain.TxRefunded},
	domain.TxWaitingPayment: {domain.TxProcessing, domain.TxPaid, domain.TxApproved, domain.TxRefused, domain.TxCancelled, domain.TxExpired, domain.TxRefunded},
	domain.TxProcessing:     {domain.TxPaid, domain.TxApproved, domain.TxRefused, domain.TxCancelled, domain.TxRefunded},
	domain.TxPaid:           {domain.TxRefunded, domain.TxDispute, domain.TxChargeback},
	domain.TxApproved:       {domain.TxRefunded, domain.TxDispute, domain.TxChargeback},
	domain.TxDispute:        {domain.TxPaid, domain.TxApproved, domain.TxChargeback, domain.TxRefunded},
}

func TestCanTransitionMatrix(t *testing.T) {
	t.Parallel()
	for _, from := range domain.TxStatuses {
		for _, to := range domain.TxStatuses {
			want := slices.Contains(statusAllowed[from], to)
			if got := domain.CanTransition(from, to); got != want {
				t.Errorf("CanTransition(%s, %s) = %v, want %v", from, to, got, want)
			}
		}
	}
}

func TestCanTransitionSpecRows(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name     string
		from, to domain.TxStatus
		want     bool
	}{
		{"created payment opens", domain.TxPending, domain.TxWaitingPayment, true},
		{"cancel waiting", domain.TxWaitingPayment, domain.TxCancelled, true},
		{"cancel pending", domain.TxPending, domain.TxCancelled, true},
		{"cancel processing", domain.TxProcessing, domain.TxCancelled, true},
		{"settled PAID cannot be cancelled", domain.TxPaid, domain.TxCancelled, false},
		{"settled APPROVED cannot be cancelled", domain.TxApproved, domain.TxCancelled, false},
		{"full refund of PAID", domain.TxPaid, domain.TxRefunded, true},
		{"full refund of APPROVED", domain.TxApproved, domain.TxRefunded, true},
		{"expired cannot be paid", domain.TxExpired, domain.TxPaid, false},
		{"refunded cannot be paid again", domain.TxRefunded, domain.TxPaid, false},
		{"paid cannot reopen", domain.TxPaid, domain.TxWaitingPayment, false},
		{"unknown source", "SETTLED", domain.TxPaid, false},
		{"unknown target", domain.TxWaitingPayment, "SETTLED", false},
		{"no self loop", domain.TxWaitingPayment, domain.TxWaitingPayment, false},
	}
	for _, tt := range tests {
		if got := domain.CanTransition(tt.from, tt.to); got != tt.want {
			t.Errorf("%s: CanTransition(%s, %s) = %v, want %v", tt.name, tt.from, tt.to, got, tt.want)
		}
	}
}
