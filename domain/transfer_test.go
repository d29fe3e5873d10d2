package domain_test

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func newRawID(t *testing.T) string {
	t.Helper()
	id, err := domain.NewRawID(rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	return id
}

func validTransfer(t *testing.T) domain.NewTransferParams {
	return domain.NewTransferParams{ID: newRawID(t), SourceID: "acct_platform", DestinationID: "acct_seller",
		Mode: domain.ModeTest, Amount: 2500, Currency: domain.CurrencyBRL, Now: time.Date(2026, 12, 23, 12, 0, 0, 0, time.UTC)}
}

func TestNewTransferRefuses(t *testing.T) {
	t.Parallel()
	for _, tt := range []struct {
		name  string
		over  func(*domain.NewTransferParams)
		field domain.Field
		err   error
	}{
		{"zero amount", func(p *domain.NewTransferParams) { p.Amount = 0 }, domain.FieldAmount, nil},
		{"negative amount", func(p *domain.NewTransferParams) { p.Amount = -1 }, domain.FieldAmount, nil},
		{"huge amount", func(p *domain.NewTransferParams) { p.Amount = domain.MaxAmount + 1 }, domain.FieldAmount, nil},
		{"no destination", func(p *domain.NewTransferParams) { p.DestinationID = "" }, domain.FieldTransferDest, nil},
		{"to itself", func(p *domain.NewTransferParams) { p.DestinationID = p.SourceID }, "", domain.ErrTransferToSelf},
		{"long description", func(p *domain.NewTransferParams) { p.Description = string(make([]rune, 141)) }, domain.FieldDescription, nil},
		{"control in description", func(p *domain.NewTransferParams) { p.Description = "a\x07b" }, domain.FieldDescription, nil},
	} {
		p := validTransfer(t)
		tt.over(&p)
		_, err := domain.NewTransfer(p)
		var ve *domain.ValidationError
		switch {
		case tt.err != nil && !errors.Is(err, tt.err):
			t.Errorf("%s: %v, want %v", tt.name, err, tt.err)
		case tt.err == nil && (!errors.As(err, &ve) || ve.Field != tt.field):
			t.Errorf("%s: %v, want a validation error of %s", tt.name, err, tt.field)
		}
	}
}

// The two entries each balance, move the amount out of the source's
// available and into the destination's, and leave transfers_in_flight
// as it was.
func TestTransferEntries(t *testing.T) {
	t.Parallel()
	tr, err := domain.NewTransfer(validTransfer(t))
	if err != nil {
		t.Fatal(err)
	}
	es := tr.Entries("e1", "e2")
	if len(es) != 2 || es[0].AccountID != "acct_platform" || es[1].AccountID != "acct_seller" {
		t.Fatalf("entries %+v", es)
	}
	wallets, inFlight := map[string]int64{}, int64(0)
	for _, e := range es {
		if err := e.Validate(); err != nil {
			t.Error(err)
		}
		if e.Kind != domain.EntryTransfer || e.TransferID != tr.ID() || e.Mode != domain.ModeTest {
			t.Errorf("entry %+v", e)
		}
		for _, p := range e.Postings {
			switch p.Account {
			case domain.LedgerAvailable:
				wallets[e.AccountID] += p.Amount
			case domain.LedgerTransfersInFlight:
				inFlight += p.Amount
			default:
				t.Errorf("posting to %s", p.Account)
			}
		}
	}
	if wallets["acct_platform"] != -2500 || wallets["acct_seller"] != 2500 || inFlight != 0 {
		t.Errorf("wallets %v, in flight %d", wallets, inFlight)
	}
}

// Both sides get a transfer.created carrying the same public transfer.
func TestTransferPublicAndEvents(t *testing.T) {
	t.Parallel()
	p := validTransfer(t)
	p.Description = "repasse"
	tr, err := domain.NewTransfer(p)
	if err != nil {
		t.Fatal(err)
	}
	evs, err := tr.Events(func() (string, error) { return domain.NewRawID(rand.Reader) })
	if err != nil || len(evs) != 2 {
		t.Fatalf("%v %v", evs, err)
	}
	for i, want := range []string{"acct_platform", "acct_seller"} {
		ev := evs[i]
		if ev.AccountID != want || ev.Type != domain.EventTransferCreated || ev.ChargeID != "tr_"+tr.ID() {
			t.Errorf("event %d: %+v", i, ev)
		}
		var env struct {
			Data struct {
				Object map[string]any `json:"object"`
			} `json:"data"`
		}
		if err := json.Unmarshal(ev.Payload, &env); err != nil {
			t.Fatal(err)
		}
		o := env.Data.Object
		if o["id"] != "tr_"+tr.ID() || o["object"] != "transfer" || o["amount"] != 2500.0 || o["source_account"] != "acct_platform" ||
			o["destination"] != "acct_seller" || o["status"] != "paid" || o["description"] != "repasse" || o["source_charge"] != nil {
			t.Errorf("event %d object: %v", i, o)
		}
		if _, ok := o["metadata"].(map[string]any); !ok {
			t.Errorf("metadata must be an object: %v", o)
		}
	}
	if raw, ok := domain.ParseTransferID("tr_" + tr.ID()); !ok || raw != tr.ID() {
		t.Errorf("ParseTransferID: %q %v", raw, ok)
	}
	if _, ok := domain.ParseTransferID("po_" + tr.ID()); ok {
		t.Error("a payout id parsed as a transfer's")
	}
}

// MaxPayoutWithin takes the largest amount whose fee still fits.
func TestMaxPayoutWithin(t *testing.T) {
	t.Parallel()
	fixed := domain.FeeSchedule{Platform: domain.Fee{Fixed: 50}}
	bps := domain.FeeSchedule{Provider: domain.Fee{BPS: 100}, Platform: domain.Fee{Fixed: 10}}
	for _, tt := range []struct {
		budget int64
		s      domain.FeeSchedule
		want   int64
	}{
		{0, fixed, 0}, {50, fixed, 0}, {51, fixed, 1}, {10050, fixed, 10000},
		{10000, domain.FeeSchedule{}, 10000},
		{10110, bps, 10000}, {10109, bps, 9999},
		{domain.MaxAmount * 2, fixed, domain.MaxAmount},
	} {
		got := domain.MaxPayoutWithin(tt.budget, tt.s)
		if got != tt.want {
			t.Errorf("MaxPayoutWithin(%d, %+v) = %d, want %d", tt.budget, tt.s, got, tt.want)
		}
		if got > 0 && got+domain.PixOutFee(tt.s, got) > tt.budget {
			t.Errorf("MaxPayoutWithin(%d) = %d does not fit", tt.budget, got)
		}
		if next := got + 1; got < domain.MaxAmount && next+domain.PixOutFee(tt.s, next) <= tt.budget {
			t.Errorf("MaxPayoutWithin(%d) = %d, but %d fits too", tt.budget, got, next)
		}
	}
}
