package domain_test

import (
	"encoding/json"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestParsePixKeyDetectsAndNormalises(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw      string
		typ      domain.PixKeyType
		wantType domain.PixKeyType
		want     string
		masked   string
	}{
		{"529.982.247-25", "", domain.PixKeyCPF, "52998224725", "***.982.247-**"},
		{"52998224725", domain.PixKeyCPF, domain.PixKeyCPF, "52998224725", "***.982.247-**"},
		{"11.444.777/0001-61", "", domain.PixKeyCNPJ, "11444777000161", "**.444.777/0001-**"},
		{"12.abc.345/01de-35", "", domain.PixKeyCNPJ, "12ABC34501DE35", "**.ABC.345/01DE-**"},
		{"Joana.Silva@Example.com", "", domain.PixKeyEmail, "joana.silva@example.com", "j***@example.com"},
		{"+55 11 98765-4321", "", domain.PixKeyPhone, "+5511987654321", "+5511*****4321"},
		{"+551133334444", domain.PixKeyPhone, domain.PixKeyPhone, "+551133334444", "+5511****4444"},
		{"123E4567-E89B-42D3-A456-426614174000", "", domain.PixKeyEVP, "123e4567-e89b-42d3-a456-426614174000",
			"123e4567-e89b-42d3-a456-426614174000"},
	}
	for _, tt := range tests {
		k, err := domain.ParsePixKey(tt.raw, tt.typ)
		if err != nil {
			t.Errorf("ParsePixKey(%q, %q): %v", tt.raw, tt.typ, err)
			continue
		}
		if k.Type != tt.wantType || k.Value != tt.want {
			t.Errorf("ParsePixKey(%q) = %+v, want %s %s", tt.raw, k, tt.wantType, tt.want)
		}
		if got := k.Masked(); got != tt.masked {
			t.Errorf("Masked(%q) = %q, want %q", tt.raw, got, tt.masked)
		}
	}
}

func TestParsePixKeyRejects(t *testing.T) {
	t.Parallel()
	tests := []struct {
		raw       string
		typ       domain.PixKeyType
		wantField domain.Field
	}{
		{"", "", domain.FieldPixKey},
		{"529.982.247-26", "", domain.FieldPixKey},     // bad check digit
		{"11.444.777/0001-62", "", domain.FieldPixKey}, // bad check digit
		{"not a key", "", domain.FieldPixKey},
		{"+1 555 123 4567", "", domain.FieldPixKey}, // not +55
		{"+552199", "", domain.FieldPixKey},
		{"a@b", "", domain.FieldPixKey},
		{"52998224725", domain.PixKeyEmail, domain.FieldPixKey}, // typed key of the wrong form
		{"123e4567-e89b-42d3-a456-42661417400g", domain.PixKeyEVP, domain.FieldPixKey},
		{"52998224725", "iban", domain.FieldPixKeyType},
	}
	for _, tt := range tests {
		_, err := domain.ParsePixKey(tt.raw, tt.typ)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != tt.wantField {
			t.Errorf("ParsePixKey(%q, %q) = %v, want a validation error on %s", tt.raw, tt.typ, err, tt.wantField)
			continue
		}
		if tt.raw != "" && strings.Contains(err.Error(), tt.raw) {
			t.Errorf("error %q repeats the key", err)
		}
	}
}

var payoutNow = time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)

func newTestPayout(t *testing.T) *domain.Payout {
	t.Helper()
	k, err := domain.ParsePixKey("52998224725", "")
	if err != nil {
		t.Fatal(err)
	}
	p, err := domain.NewPayout(domain.NewPayoutParams{ID: strings.Repeat("a", domain.RawIDLen), AccountID: "acct_1",
		Mode: domain.ModeTest, Amount: 10000, Fee: 50, Key: k, Description: "saque", SendID: domain.DeriveTxID("x"),
		Metadata: map[string]any{"order": "42"}, Now: payoutNow})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func TestPayoutTransitions(t *testing.T) {
	t.Parallel()
	p := newTestPayout(t)
	if p.Status() != domain.PayoutPending || p.Debit() != 10050 {
		t.Fatalf("new payout: %s debit %d", p.Status(), p.Debit())
	}
	if err := p.MarkProcessing(payoutNow); err != nil {
		t.Fatal(err)
	}
	if err := p.Cancel(payoutNow); !errors.Is(err, domain.ErrPayoutNotCancellable) {
		t.Errorf("cancel while processing: %v", err)
	}
	if err := p.MarkFailed("account_closed", payoutNow); err != nil {
		t.Fatal(err)
	}
	if err := p.MarkPaid("", payoutNow); !errors.Is(err, domain.ErrPayoutNotOpen) {
		t.Errorf("paid after failed: %v", err)
	}
	pub := p.Public()
	if pub.FailureCode == nil || *pub.FailureCode != "account_closed" || pub.FailedAt == nil || pub.PaidAt != nil {
		t.Errorf("failed public payout: %+v", pub)
	}
	q := newTestPayout(t)
	if err := q.MarkFailed("no such code", payoutNow); err != nil || *q.Public().FailureCode != "rejected_by_psp" {
		t.Errorf("unknown failure code: %v %v", err, q.Public().FailureCode)
	}
	c := newTestPayout(t)
	if err := c.Cancel(payoutNow); err != nil || c.Status() != domain.PayoutCancelled {
		t.Errorf("cancel pending: %v %s", err, c.Status())
	}
}

func TestPayoutPublicMasksTheKey(t *testing.T) {
	t.Parallel()
	body, err := json.Marshal(newTestPayout(t).Public())
	if err != nil {
		t.Fatal(err)
	}
	s := string(body)
	if strings.Contains(s, "52998224725") || !strings.Contains(s, `"destination":{"type":"cpf","key":"***.982.247-**"}`) {
		t.Errorf("public payout: %s", s)
	}
	for _, f := range []string{`"object":"payout"`, `"end_to_end_id":null`, `"paid_at":null`, `"fee":50`, `"status":"pending"`} {
		if !strings.Contains(s, f) {
			t.Errorf("public payout lacks %s: %s", f, s)
		}
	}
}

func TestPayoutEntriesBalanceAndMoveTheHold(t *testing.T) {
	t.Parallel()
	sum := func(es []domain.JournalEntry, acct domain.LedgerAccount) int64 {
		var n int64
		for _, e := range es {
			if err := e.Validate(); err != nil {
				t.Fatal(err)
			}
			for _, p := range e.Postings {
				if p.Account == acct {
					n += p.Amount
				}
			}
		}
		return n
	}
	p := newTestPayout(t)
	create, _ := domain.PayoutEntryFor("e1", p, "", payoutNow)
	_ = p.MarkPaid("E1", payoutNow)
	paid, ok := domain.PayoutEntryFor("e2", p, domain.PayoutPending, payoutNow)
	if !ok {
		t.Fatal("no entry for paid")
	}
	es := []domain.JournalEntry{create, paid}
	if got := sum(es, domain.LedgerAvailable); got != -10050 {
		t.Errorf("paid payout takes %d from available, want -10050", got)
	}
	if got := sum(es, domain.LedgerPayoutsHeld); got != 0 {
		t.Errorf("hold after paid: %d", got)
	}
	f := newTestPayout(t)
	create, _ = domain.PayoutEntryFor("e3", f, "", payoutNow)
	_ = f.Cancel(payoutNow)
	rel, _ := domain.PayoutEntryFor("e4", f, domain.PayoutPending, payoutNow)
	es = []domain.JournalEntry{create, rel}
	if sum(es, domain.LedgerAvailable) != 0 || sum(es, domain.LedgerPayoutsHeld) != 0 {
		t.Errorf("cancelled payout did not give everything back")
	}
	if _, ok := domain.PayoutEntryFor("e5", newTestPayout(t), domain.PayoutPending, payoutNow); ok {
		t.Errorf("an entry for a move that changes no money")
	}
}

func TestPayoutEvents(t *testing.T) {
	t.Parallel()
	tests := []struct {
		prev, to domain.PayoutStatus
		want     []domain.EventType
	}{
		{"", domain.PayoutPending, []domain.EventType{domain.EventPayoutCreated, domain.EventWithdrawalCreated}},
		{domain.PayoutPending, domain.PayoutProcessing, []domain.EventType{domain.EventWithdrawalStatusChanged}},
		{domain.PayoutProcessing, domain.PayoutPaid, []domain.EventType{domain.EventPayoutPaid, domain.EventWithdrawalCompleted, domain.EventWithdrawalStatusChanged}},
		{domain.PayoutProcessing, domain.PayoutFailed, []domain.EventType{domain.EventPayoutFailed, domain.EventWithdrawalFailed, domain.EventWithdrawalStatusChanged}},
		{domain.PayoutPending, domain.PayoutCancelled, []domain.EventType{domain.EventPayoutFailed, domain.EventWithdrawalFailed, domain.EventWithdrawalStatusChanged}},
	}
	for _, tt := range tests {
		if got := domain.PayoutEvents(tt.prev, tt.to); !slices.Equal(got, tt.want) {
			t.Errorf("PayoutEvents(%q, %q) = %v, want %v", tt.prev, tt.to, got, tt.want)
		}
		for _, e := range tt.want {
			if !domain.KnownEvent(e) {
				t.Errorf("%s is not in the catalog", e)
			}
		}
	}
	p := newTestPayout(t)
	_ = p.MarkPaid("E2E", payoutNow)
	n := 0
	evs, err := domain.NewPayoutEvents(p, domain.PayoutProcessing, func() (string, error) { n++; return strings.Repeat("b", 25) + string(rune('a'+n)), nil }, payoutNow)
	if err != nil || len(evs) != 3 {
		t.Fatalf("events: %v %d", err, len(evs))
	}
	var canon domain.CanonicalEnvelope
	var obj struct {
		Data struct {
			Object domain.PublicPayout `json:"object"`
		} `json:"data"`
	}
	if err := json.Unmarshal(evs[0].Payload, &canon); err != nil || canon.Type != domain.EventPayoutPaid || canon.ID != evs[0].ID {
		t.Errorf("canonical envelope: %s", evs[0].Payload)
	}
	_ = json.Unmarshal(evs[0].Payload, &obj)
	if obj.Data.Object.ID != domain.PrefixPayout+p.ID() || obj.Data.Object.Status != domain.PayoutPaid {
		t.Errorf("data.object: %+v", obj.Data.Object)
	}
	var legacy domain.LegacyEnvelope
	if err := json.Unmarshal(evs[1].Payload, &legacy); err != nil || legacy.Data.Status != "COMPLETED" ||
		legacy.Data.PreviousStatus == nil || *legacy.Data.PreviousStatus != "PROCESSING" || legacy.Data.TransactionID != "po_"+p.ID() {
		t.Errorf("legacy envelope: %s", evs[1].Payload)
	}
}
