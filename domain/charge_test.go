package domain_test

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// Fixtures shared by the charge, event and public tests. The documents are
// valid check-digit vectors from testdata/tax-id-vectors.txt.
const (
	chargeRawID   = "abcdefghijklmnopqrstuvwxyz"
	chargeCPF     = "52998224725"
	chargeCPF2    = "11144477735"
	chargeCNPJ    = "12ABC34501DE35"
	chargeAmount  = int64(10_000)
	chargeE2E     = "E00000000202611221200abcdefghijk"
	chargeBRCode  = "00020101021226740014br.gov.bcb.pix"
	chargePixTxID = "quitatxid0123456789abcdefghij"
)

// chargeT0 is the creation time of every fixture charge. Time is always an
// argument: nothing here reads the clock.
var chargeT0 = time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)

var chargeLinks = domain.Links{CheckoutBase: "https://pay.quita.test/c"}

var chargePixFees = domain.FeeSchedule{
	Provider: domain.Fee{BPS: 50},
	Platform: domain.Fee{BPS: 49},
}

func chargeParams() domain.NewChargeParams {
	return domain.NewChargeParams{
		ID:        chargeRawID,
		AccountID: "acct_1",
		Mode:      domain.ModeTest,
		Amount:    chargeAmount,
		Currency:  "BRL",
		Methods:   []domain.Method{domain.MethodPix},
		Now:       chargeT0,
	}
}

func chargeNew(t *testing.T, edit func(*domain.NewChargeParams)) *domain.Charge {
	t.Helper()
	p := chargeParams()
	if edit != nil {
		edit(&p)
	}
	c, err := domain.NewCharge(p)
	if err != nil {
		t.Fatalf("NewCharge: %v", err)
	}
	return c
}

// chargeOpen returns a charge awaiting payment (WAITING_PAYMENT), locked to
// expectedPayer when it is not empty.
func chargeOpen(t *testing.T, expectedPayer string) *domain.Charge {
	t.Helper()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		if expectedPayer != "" {
			p.ExpectedPayer = expectedPayer
			p.Customer.Name = "Maria Silva"
		}
	})
	pix := domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: chargeT0.Add(time.Hour)}
	if err := c.AttachPix(pix, "sandbox", "ref-1", chargeT0); err != nil {
		t.Fatalf("AttachPix: %v", err)
	}
	return c
}

// chargeInStatus loads a charge in any status, the way a storage adapter
// would, to test transitions out of states NewCharge cannot produce.
func chargeInStatus(status domain.TxStatus) *domain.Charge {
	return domain.UnmarshalChargeFromStorage(domain.ChargeSnapshot{
		ID: chargeRawID, AccountID: "acct_1", Mode: domain.ModeTest,
		Amount: chargeAmount, Currency: domain.CurrencyBRL,
		Methods:   []domain.Method{domain.MethodPix},
		Status:    status,
		ExpiresAt: chargeT0.Add(time.Hour), CreatedAt: chargeT0, UpdatedAt: chargeT0,
	})
}

func chargePayment(payer string) domain.PixPayment {
	return domain.PixPayment{
		EndToEndID: chargeE2E, Amount: chargeAmount, PayerTaxID: payer,
		PayerName: "Payer Name", PaidAt: chargeT0.Add(10 * time.Minute),
	}
}

func TestNewChargeDefaults(t *testing.T) {
	t.Parallel()
	saoPaulo := time.FixedZone("BRT", -3*60*60)
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Currency = ""
		p.Now = chargeT0.In(saoPaulo)
	})
	s := c.Snapshot()
	if s.Status != domain.TxPending {
		t.Errorf("status = %s, want %s", s.Status, domain.TxPending)
	}
	if s.Currency != domain.CurrencyBRL {
		t.Errorf("currency = %q, want BRL by default", s.Currency)
	}
	if want := chargeT0.Add(domain.DefaultExpiresIn * time.Second); !s.ExpiresAt.Equal(want) {
		t.Errorf("expires_at = %v, want %v", s.ExpiresAt, want)
	}
	if s.CreatedAt.Location() != time.UTC || !s.CreatedAt.Equal(chargeT0) {
		t.Errorf("created_at = %v, want %v in UTC", s.CreatedAt, chargeT0)
	}
	if c.Pix() != nil || c.Settlement() != nil {
		t.Errorf("new charge has pix %v settlement %v, want neither", c.Pix(), c.Settlement())
	}
	if c.ExpectedPayer() != "" {
		t.Errorf("ExpectedPayer = %q without a lock", c.ExpectedPayer())
	}
	if (c.Fees() != domain.Fees{}) {
		t.Errorf("fees before payment = %+v, want zero", c.Fees())
	}
}

func TestNewChargeExpiry(t *testing.T) {
	t.Parallel()
	secs := func(n int64) *int64 { return &n }
	tests := []struct {
		name          string
		expiresIn     *int64
		defaultExpiry time.Duration
		now           time.Time
		want          time.Duration
	}{
		{"no expires_in, no account default", nil, 0, chargeT0, time.Hour},
		{"account default", nil, 10 * time.Minute, chargeT0, 10 * time.Minute},
		{"expires_in wins over the default", secs(120), 10 * time.Minute, chargeT0, 2 * time.Minute},
		{"minimum", secs(domain.MinExpiresIn), 0, chargeT0, time.Minute},
		{"maximum", secs(domain.MaxExpiresIn), 0, chargeT0, 24 * time.Hour},
		{"above maximum is capped", secs(domain.MaxExpiresIn + 1), 0, chargeT0, 24 * time.Hour},
		{"far above maximum is capped", secs(1 << 40), 0, chargeT0, 24 * time.Hour},
		{"sub-second creation time truncates the expiry", secs(60), 0, chargeT0.Add(900 * time.Millisecond), time.Minute},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeNew(t, func(p *domain.NewChargeParams) {
				p.ExpiresIn, p.DefaultExpiry, p.Now = tt.expiresIn, tt.defaultExpiry, tt.now
			})
			if want := chargeT0.Add(tt.want); !c.ExpiresAt().Equal(want) {
				t.Errorf("ExpiresAt = %v, want %v", c.ExpiresAt(), want)
			}
		})
	}
}

func TestNewChargeRejects(t *testing.T) {
	t.Parallel()
	many := func(n int) map[string]any {
		m := make(map[string]any, n)
		for i := range n {
			m[fmt.Sprintf("key%02d", i)] = i
		}
		return m
	}
	short := int64(domain.MinExpiresIn - 1)
	tests := []struct {
		name      string
		edit      func(*domain.NewChargeParams)
		wantParam string
		wantCode  string
	}{
		{"id not a raw id", func(p *domain.NewChargeParams) { p.ID = "ch_" + chargeRawID }, "id", domain.CodeParameterInvalid},
		{"no account", func(p *domain.NewChargeParams) { p.AccountID = "" }, "id", domain.CodeParameterInvalid},
		{"unknown mode", func(p *domain.NewChargeParams) { p.Mode = "prod" }, "id", domain.CodeParameterInvalid},
		{"no time", func(p *domain.NewChargeParams) { p.Now = time.Time{} }, "id", domain.CodeParameterInvalid},
		{"zero amount", func(p *domain.NewChargeParams) { p.Amount = 0 }, "amount", domain.CodeParameterInvalid},
		{"negative amount", func(p *domain.NewChargeParams) { p.Amount = -1 }, "amount", domain.CodeParameterInvalid},
		{"amount above the maximum", func(p *domain.NewChargeParams) { p.Amount = domain.MaxAmount + 1 }, "amount", domain.CodeParameterInvalid},
		{"currency too short", func(p *domain.NewChargeParams) { p.Currency = "BR" }, "currency", domain.CodeParameterInvalid},
		{"currency with a symbol", func(p *domain.NewChargeParams) { p.Currency = "R$L" }, "currency", domain.CodeParameterInvalid},
		{"pix in another currency", func(p *domain.NewChargeParams) { p.Currency = "USD" }, "currency", domain.CodeParameterInvalid},
		{"no method", func(p *domain.NewChargeParams) { p.Methods = nil }, "payment_method", domain.CodeParameterMissing},
		{"unknown method", func(p *domain.NewChargeParams) { p.Methods = []domain.Method{"pix"} }, "payment_method", domain.CodeParameterInvalid},
		{"description too long", func(p *domain.NewChargeParams) { p.Description = strings.Repeat("é", domain.MaxDescriptionLen+1) }, "description", domain.CodeParameterInvalid},
		{"expires_in below the minimum", func(p *domain.NewChargeParams) { p.ExpiresIn = &short }, "expires_in", domain.CodeParameterInvalid},
		{"customer name too long", func(p *domain.NewChargeParams) { p.Customer.Name = strings.Repeat("a", 201) }, "customer.name", domain.CodeParameterInvalid},
		{"customer phone too long", func(p *domain.NewChargeParams) { p.Customer.Phone = strings.Repeat("1", 201) }, "customer.phone", domain.CodeParameterInvalid},
		{"customer email invalid", func(p *domain.NewChargeParams) { p.Customer.Email = "maria@" }, "customer.email", domain.CodeParameterInvalid},
		{"customer email with display name", func(p *domain.NewChargeParams) { p.Customer.Email = "Maria <maria@example.com>" }, "customer.email", domain.CodeParameterInvalid},
		{"customer email without a domain dot", func(p *domain.NewChargeParams) { p.Customer.Email = "maria@localhost" }, "customer.email", domain.CodeParameterInvalid},
		{"strict document invalid", func(p *domain.NewChargeParams) {
			p.StrictDocument, p.Customer.Document = true, "52998224724"
		}, "customer.document", domain.CodeParameterInvalid},
		{"payer lock without customer name", func(p *domain.NewChargeParams) { p.ExpectedPayer = chargeCPF }, "customer.name", domain.CodeParameterMissing},
		{"payer lock with blank customer name", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name = chargeCPF, "   "
		}, "customer.name", domain.CodeParameterMissing},
		{"payer lock with a bad check digit", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name = "52998224724", "Maria"
		}, "expected_payer_tax_id", domain.CodeParameterInvalid},
		{"payer lock differing from customer.document", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name, p.Customer.Document = chargeCPF, "Maria", chargeCPF2
		}, "expected_payer_tax_id", domain.CodeParameterInvalid},
		{"metadata key too long", func(p *domain.NewChargeParams) {
			p.Metadata = map[string]any{strings.Repeat("k", domain.MaxMetadataKeyLen+1): 1}
		}, "metadata", domain.CodeParameterInvalid},
		{"too many metadata keys", func(p *domain.NewChargeParams) { p.Metadata = many(domain.MaxMetadataKeys + 1) }, "metadata", domain.CodeParameterInvalid},
		{"description pushes metadata over the limit", func(p *domain.NewChargeParams) {
			p.Metadata, p.Description = many(domain.MaxMetadataKeys), "order 1"
		}, "metadata", domain.CodeParameterInvalid},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := chargeParams()
			tt.edit(&p)
			c, err := domain.NewCharge(p)
			if c != nil || !errors.Is(err, domain.ErrValidation) {
				t.Fatalf("NewCharge = %v, %v; want a validation error", c, err)
			}
			var ve *domain.ValidationError
			if !errors.As(err, &ve) {
				t.Fatalf("error %T is not a *ValidationError", err)
			}
			if ve.Param != tt.wantParam || ve.Code != tt.wantCode {
				t.Errorf("error param, code = %q, %q; want %q, %q", ve.Param, ve.Code, tt.wantParam, tt.wantCode)
			}
		})
	}
}

func TestNewChargeAcceptsLimits(t *testing.T) {
	t.Parallel()
	meta := make(map[string]any, domain.MaxMetadataKeys)
	for i := range domain.MaxMetadataKeys {
		meta[fmt.Sprintf("key%02d", i)] = i
	}
	tests := []struct {
		name string
		edit func(*domain.NewChargeParams)
	}{
		{"maximum amount", func(p *domain.NewChargeParams) { p.Amount = domain.MaxAmount }},
		{"one centavo", func(p *domain.NewChargeParams) { p.Amount = 1 }},
		{"lower-case currency", func(p *domain.NewChargeParams) { p.Currency = "brl" }},
		{"other currency without pix", func(p *domain.NewChargeParams) {
			p.Currency, p.Methods = "USD", []domain.Method{domain.MethodCreditCard}
		}},
		{"description of exactly 500 multi-byte characters", func(p *domain.NewChargeParams) {
			p.Description = strings.Repeat("ç", domain.MaxDescriptionLen)
		}},
		{"customer fields of 200 characters", func(p *domain.NewChargeParams) {
			p.Customer = domain.Customer{Name: strings.Repeat("ã", 200), Phone: strings.Repeat("1", 200)}
		}},
		{"any document when not strict", func(p *domain.NewChargeParams) { p.Customer.Document = "PT123456789" }},
		{"valid document when strict", func(p *domain.NewChargeParams) {
			p.StrictDocument, p.Customer.Document = true, "529.982.247-25"
		}},
		{"metadata key of 40 characters", func(p *domain.NewChargeParams) {
			p.Metadata = map[string]any{strings.Repeat("k", domain.MaxMetadataKeyLen): 1}
		}},
		{"50 metadata keys", func(p *domain.NewChargeParams) { p.Metadata = meta }},
		{"payer lock matching a formatted customer.document", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name, p.Customer.Document = chargeCPF, "Maria", "529.982.247-25"
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			p := chargeParams()
			tt.edit(&p)
			if _, err := domain.NewCharge(p); err != nil {
				t.Errorf("NewCharge: %v", err)
			}
		})
	}
	if len(meta) != domain.MaxMetadataKeys {
		t.Fatalf("fixture has %d metadata keys, want %d", len(meta), domain.MaxMetadataKeys)
	}
}

func TestNewChargeMetadata(t *testing.T) {
	t.Parallel()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Description = "Pedido 42"
		p.Metadata = map[string]any{
			"order":       "42",
			"quitation":   true, // only "quita_" is reserved, not every word starting with quita
			"_internal":   "x",
			"quita_fee":   1,
			"QUITA_Fee":   2,
			"":            "empty key",
			"description": "overwritten by the description field",
		}
	})
	got := c.Snapshot().Metadata
	want := map[string]any{"order": "42", "quitation": true, "description": "Pedido 42"}
	if len(got) != len(want) {
		t.Fatalf("metadata = %v, want %v", got, want)
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("metadata[%q] = %v, want %v", k, got[k], v)
		}
	}
}

func TestNewChargeNormalisesTheCustomerAndPayerLock(t *testing.T) {
	t.Parallel()
	tests := []struct{ name, expected, document, want string }{
		{"formatted CPF", "529.982.247-25", "", chargeCPF},
		{"lower-case alphanumeric CNPJ", "12.abc.345/01de-35", "12ABC34501DE35", chargeCNPJ},
		{"numeric CNPJ", "11444777000161", "11.444.777/0001-61", "11444777000161"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeNew(t, func(p *domain.NewChargeParams) {
				p.ExpectedPayer, p.Customer.Document, p.Customer.Name = tt.expected, tt.document, "  Maria Silva "
			})
			if got := c.ExpectedPayer(); got != tt.want {
				t.Errorf("ExpectedPayer = %q, want %q", got, tt.want)
			}
			if got := c.Snapshot().Customer.Name; got != "Maria Silva" {
				t.Errorf("customer name = %q, want it trimmed", got)
			}
		})
	}
}

func TestNewChargeCopiesItsInput(t *testing.T) {
	t.Parallel()
	methods := []domain.Method{domain.MethodPix}
	meta := map[string]any{"order": "42"}
	c := chargeNew(t, func(p *domain.NewChargeParams) { p.Methods, p.Metadata = methods, meta })
	methods[0], meta["order"] = domain.MethodBoleto, "changed"

	if got := c.Methods(); len(got) != 1 || got[0] != domain.MethodPix {
		t.Errorf("Methods = %v after the caller's slice changed", got)
	}
	if got := c.Snapshot().Metadata["order"]; got != "42" {
		t.Errorf("metadata order = %v after the caller's map changed", got)
	}

	s := c.Snapshot()
	s.Metadata["order"], s.Methods[0] = "snapshot", domain.MethodCrypto
	if c.Snapshot().Metadata["order"] != "42" || c.Methods()[0] != domain.MethodPix {
		t.Errorf("changing a snapshot changed the charge")
	}
}

func TestAttachPix(t *testing.T) {
	t.Parallel()
	t.Run("opens the charge for payment", func(t *testing.T) {
		t.Parallel()
		c := chargeNew(t, nil)
		at := chargeT0.Add(time.Second)
		pixExpiry := chargeT0.Add(59 * time.Minute)
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: pixExpiry}, "sandbox", "ref-1", at); err != nil {
			t.Fatalf("AttachPix: %v", err)
		}
		s := c.Snapshot()
		if s.Status != domain.TxWaitingPayment {
			t.Errorf("status = %s, want WAITING_PAYMENT", s.Status)
		}
		if s.Provider != "sandbox" || s.ProviderRef != "ref-1" || s.Pix == nil || s.Pix.BRCode != chargeBRCode {
			t.Errorf("provider %q ref %q pix %+v not recorded", s.Provider, s.ProviderRef, s.Pix)
		}
		if !c.ExpiresAt().Equal(pixExpiry) {
			t.Errorf("ExpiresAt = %v, want the acquirer's %v (authoritative)", c.ExpiresAt(), pixExpiry)
		}
		if !s.UpdatedAt.Equal(at) {
			t.Errorf("updated_at = %v, want %v", s.UpdatedAt, at)
		}
	})
	t.Run("keeps the charge expiry when the acquirer gives none", func(t *testing.T) {
		t.Parallel()
		c := chargeNew(t, nil)
		want := c.ExpiresAt()
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode}, "sandbox", "ref", chargeT0); err != nil {
			t.Fatalf("AttachPix: %v", err)
		}
		if !c.ExpiresAt().Equal(want) || !c.Pix().ExpiresAt.Equal(want) {
			t.Errorf("ExpiresAt = %v, pix %v; want %v", c.ExpiresAt(), c.Pix().ExpiresAt, want)
		}
	})
	t.Run("twice", func(t *testing.T) {
		t.Parallel()
		c := chargeOpen(t, "")
		err := c.AttachPix(domain.PixDetails{BRCode: "other"}, "sandbox", "ref-2", chargeT0)
		if !errors.Is(err, domain.ErrPixAlreadyAttached) {
			t.Errorf("second AttachPix = %v, want ErrPixAlreadyAttached", err)
		}
		if c.Pix().BRCode != chargeBRCode {
			t.Errorf("second AttachPix replaced the BR Code")
		}
	})
	t.Run("after refusal", func(t *testing.T) {
		t.Parallel()
		c := chargeInStatus(domain.TxRefused)
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode}, "sandbox", "ref", chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
			t.Errorf("AttachPix on REFUSED = %v, want ErrInvalidTransition", err)
		}
		if c.Pix() != nil || c.Status() != domain.TxRefused {
			t.Errorf("refused charge changed: pix %v status %s", c.Pix(), c.Status())
		}
	})
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			err := c.Refuse(chargeT0)
			if from == domain.TxPending {
				if err != nil || c.Status() != domain.TxRefused {
					t.Errorf("Refuse = %v, status %s; want nil, REFUSED", err, c.Status())
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalidTransition) || c.Status() != from {
				t.Errorf("Refuse = %v, status %s; want ErrInvalidTransition, %s", err, c.Status(), from)
			}
		})
	}
}

func TestSettlePix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		lock        string
		payer       string
		amount      int64
		want        domain.SettlementOutcome
		wantStatus  domain.TxStatus
		wantPublic  domain.Status
		wantFees    domain.Fees
		wantReturn  domain.ReturnState
		wantRefund  int64
		wantSettled bool
	}{
		{"no lock, payer disclosed", "", chargeCPF2, chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"no lock, payer undisclosed", "", "", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, same CPF formatted by the bank", chargeCPF, "529.982.247-25", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, same alphanumeric CNPJ in lower case", chargeCNPJ, "12.abc.345/01de-35", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, another document", chargeCPF, chargeCPF2, chargeAmount,
			domain.OutcomePayerMismatch, domain.TxRefunded, domain.StatusRefunded, domain.Fees{}, domain.ReturnRequested, chargeAmount, true},
		{"lock, CNPJ paying for a CPF", chargeCPF, "11444777000161", chargeAmount,
			domain.OutcomePayerMismatch, domain.TxRefunded, domain.StatusRefunded, domain.Fees{}, domain.ReturnRequested, chargeAmount, true},
		{"lock, bank did not disclose the payer", chargeCPF, "", chargeAmount,
			domain.OutcomeHeldForReview, domain.TxProcessing, domain.StatusProcessing, domain.Fees{}, domain.ReturnNone, 0, true},
		{"underpaid", "", chargeCPF, chargeAmount - 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
		{"overpaid", "", chargeCPF, chargeAmount + 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
		{"underpaid under a lock by another payer", chargeCPF, chargeCPF2, 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeOpen(t, tt.lock)
			p := chargePayment(tt.payer)
			p.Amount = tt.amount
			got, err := c.SettlePix(p, chargePixFees)
			if err != nil || got != tt.want {
				t.Fatalf("SettlePix = %q, %v; want %q", got, err, tt.want)
			}
			if c.Status() != tt.wantStatus || c.Status().Public() != tt.wantPublic {
				t.Errorf("status = %s (%s), want %s (%s)", c.Status(), c.Status().Public(), tt.wantStatus, tt.wantPublic)
			}
			if c.Fees() != tt.wantFees {
				t.Errorf("fees = %+v, want %+v (only a credited payment is charged)", c.Fees(), tt.wantFees)
			}
			s := c.Snapshot()
			if s.ReturnState != tt.wantReturn || s.RefundedAmount != tt.wantRefund {
				t.Errorf("return %q refunded %d, want %q %d", s.ReturnState, s.RefundedAmount, tt.wantReturn, tt.wantRefund)
			}
			st := c.Settlement()
			if !tt.wantSettled {
				if st != nil {
					t.Errorf("settlement = %+v, want none", st)
				}
				return
			}
			if st == nil {
				t.Fatal("no settlement recorded")
			}
			if !st.PaidAt.Equal(p.PaidAt) || st.PaidAt.Location() != time.UTC {
				t.Errorf("paid at %v, want %v in UTC", st.PaidAt, p.PaidAt)
			}
			st.PaidAt = time.Time{}
			want := domain.Settlement{
				EndToEndID: chargeE2E, Amount: chargeAmount, PaidWith: domain.MethodPix,
				PayerTaxID: domain.NormalizeTaxID(tt.payer), PayerName: "Payer Name",
			}
			if *st != want {
				t.Errorf("settlement = %+v, want %+v", *st, want)
			}
			if !s.UpdatedAt.Equal(p.PaidAt) {
				t.Errorf("updated_at = %v, want the payment time %v", s.UpdatedAt, p.PaidAt)
			}
		})
	}
}

// A Pix payment on a charge still in PENDING (public "pending" too) follows
// the same payer-lock rows as one in WAITING_PAYMENT.
func TestSettlePixFromPending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lock, payer string
		want              domain.SettlementOutcome
		wantStatus        domain.TxStatus
	}{
		{"no lock", "", chargeCPF, domain.OutcomePaid, domain.TxPaid},
		{"lock matched", chargeCPF, chargeCPF, domain.OutcomePaid, domain.TxPaid},
		{"lock mismatched", chargeCPF, chargeCPF2, domain.OutcomePayerMismatch, domain.TxRefunded},
		{"lock undisclosed", chargeCPF, "", domain.OutcomeHeldForReview, domain.TxProcessing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeNew(t, func(p *domain.NewChargeParams) {
				if tt.lock != "" {
					p.ExpectedPayer, p.Customer.Name = tt.lock, "Maria"
				}
			})
			got, err := c.SettlePix(chargePayment(tt.payer), chargePixFees)
			if err != nil || got != tt.want || c.Status() != tt.wantStatus {
				t.Errorf("SettlePix = %q, %v, status %s; want %q, nil, %s", got, err, c.Status(), tt.want, tt.wantStatus)
			}
		})
	}
}

func TestSettlePixIsIdempotentPerEndToEndID(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"", chargeCPF} {
		t.Run("lock="+lock, func(t *testing.T) {
			t.Parallel()
			c := chargeOpen(t, lock)
			first, err := c.SettlePix(chargePayment(chargeCPF2), chargePixFees)
			if err != nil {
				t.Fatalf("first SettlePix: %v", err)
			}
			before := c.Snapshot()

			replay := chargePayment(chargeCPF2)
			replay.PaidAt = replay.PaidAt.Add(time.Hour) // even past expiry
			got, err := c.SettlePix(replay, domain.FeeSchedule{Provider: domain.Fee{BPS: 9999}})
			if err != nil || got != domain.OutcomeDuplicate {
				t.Fatalf("replay = %q, %v; want %q", got, err, domain.OutcomeDuplicate)
			}
			after := c.Snapshot()
			if after.Status != before.Status || after.Fees != before.Fees || !after.UpdatedAt.Equal(before.UpdatedAt) || *after.Settlement != *before.Settlement {
				t.Errorf("replay of a %q payment changed the charge: %+v → %+v", first, before, after)
			}

			other := chargePayment(chargeCPF2)
			other.EndToEndID = chargeE2E[:len(chargeE2E)-1] + "z"
			if _, err := c.SettlePix(other, chargePixFees); !errors.Is(err, domain.ErrChargeNotPayable) {
				t.Errorf("second, different payment = %v, want ErrChargeNotPayable", err)
			}
		})
	}
}

func TestSettlePixRejects(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	tests := []struct {
		name    string
		status  domain.TxStatus
		edit    func(*domain.PixPayment)
		wantErr error
	}{
		{"no end-to-end id", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.EndToEndID = "" }, domain.ErrValidation},
		{"zero amount", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.Amount = 0 }, domain.ErrValidation},
		{"negative amount", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.Amount = -chargeAmount }, domain.ErrValidation},
		{"no payment time", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = time.Time{} }, domain.ErrValidation},
		{"paid exactly at expiry", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = expiry }, domain.ErrChargeExpired},
		{"paid after expiry", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = expiry.Add(time.Second) }, domain.ErrChargeExpired},
		{"already expired", domain.TxExpired, nil, domain.ErrChargeNotPayable},
		{"cancelled", domain.TxCancelled, nil, domain.ErrChargeNotPayable},
		{"refused", domain.TxRefused, nil, domain.ErrChargeNotPayable},
		{"held for review", domain.TxProcessing, nil, domain.ErrChargeNotPayable},
		{"paid by another payment", domain.TxPaid, nil, domain.ErrChargeNotPayable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(tt.status)
			p := chargePayment(chargeCPF)
			if tt.edit != nil {
				tt.edit(&p)
			}
			got, err := c.SettlePix(p, chargePixFees)
			if got != "" || !errors.Is(err, tt.wantErr) {
				t.Errorf("SettlePix = %q, %v; want %v", got, err, tt.wantErr)
			}
			if c.Status() != tt.status || c.Settlement() != nil || (c.Fees() != domain.Fees{}) {
				t.Errorf("rejected payment changed the charge: status %s settlement %v fees %+v", c.Status(), c.Settlement(), c.Fees())
			}
		})
	}
}

func TestMarkReturned(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, chargeCPF)
	if err := c.MarkReturned(chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("MarkReturned before a mismatch = %v, want ErrInvalidTransition", err)
	}
	if _, err := c.SettlePix(chargePayment(chargeCPF2), chargePixFees); err != nil {
		t.Fatal(err)
	}
	at := chargeT0.Add(20 * time.Minute)
	if err := c.MarkReturned(at); err != nil {
		t.Fatalf("MarkReturned: %v", err)
	}
	if c.ReturnState() != domain.ReturnDone || !c.Snapshot().UpdatedAt.Equal(at) {
		t.Errorf("return state %q updated %v, want done at %v", c.ReturnState(), c.Snapshot().UpdatedAt, at)
	}
	if c.Status() != domain.TxRefunded {
		t.Errorf("status = %s, want REFUNDED to stay", c.Status())
	}
	if err := c.MarkReturned(at); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("second MarkReturned = %v, want ErrInvalidTransition", err)
	}

	paid := chargeOpen(t, "")
	if _, err := paid.SettlePix(chargePayment(chargeCPF), chargePixFees); err != nil {
		t.Fatal(err)
	}
	if err := paid.MarkReturned(at); !errors.Is(err, domain.ErrInvalidTransition) || paid.ReturnState() != domain.ReturnNone {
		t.Errorf("MarkReturned on a paid charge = %v, state %q", err, paid.ReturnState())
	}
}

func TestExpire(t *testing.T) {
	t.Parallel()
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			at := chargeT0.Add(2 * time.Hour)
			err := c.Expire(at)
			if from == domain.TxPending || from == domain.TxWaitingPayment {
				if err != nil || c.Status() != domain.TxExpired || !c.Snapshot().UpdatedAt.Equal(at) {
					t.Errorf("Expire = %v, status %s, updated %v; want EXPIRED at %v", err, c.Status(), c.Snapshot().UpdatedAt, at)
				}
				return
			}
			if !errors.Is(err, domain.ErrChargeNotExpirable) || c.Status() != from {
				t.Errorf("Expire = %v, status %s; want ErrChargeNotExpirable, %s", err, c.Status(), from)
			}
		})
	}
}

func TestCancel(t *testing.T) {
	t.Parallel()
	cancellable := map[domain.TxStatus]bool{
		domain.TxWaitingPayment: true, domain.TxPending: true, domain.TxProcessing: true,
	}
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			at := chargeT0.Add(time.Minute)
			err := c.Cancel(at)
			if cancellable[from] {
				if err != nil || c.Status() != domain.TxCancelled || !c.Snapshot().UpdatedAt.Equal(at) {
					t.Errorf("Cancel = %v, status %s; want CANCELLED", err, c.Status())
				}
				return
			}
			if !errors.Is(err, domain.ErrChargeNotCancellable) || c.Status() != from {
				t.Errorf("Cancel = %v, status %s; want ErrChargeNotCancellable, %s", err, c.Status(), from)
			}
		})
	}
}

func TestExpiredAt(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	tests := []struct {
		name   string
		status domain.TxStatus
		now    time.Time
		want   bool
	}{
		{"open, before expiry", domain.TxWaitingPayment, expiry.Add(-time.Nanosecond), false},
		{"open, at expiry", domain.TxWaitingPayment, expiry, true},
		{"open, after expiry", domain.TxWaitingPayment, expiry.Add(time.Hour), true},
		{"pending, after expiry", domain.TxPending, expiry.Add(time.Second), true},
		{"paid, after expiry", domain.TxPaid, expiry.Add(time.Hour), false},
		{"held for review, after expiry", domain.TxProcessing, expiry.Add(time.Hour), false},
		{"already expired", domain.TxExpired, expiry.Add(time.Hour), false},
		{"cancelled, after expiry", domain.TxCancelled, expiry.Add(time.Hour), false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			if got := chargeInStatus(tt.status).ExpiredAt(tt.now); got != tt.want {
				t.Errorf("ExpiredAt(%v) = %v, want %v", tt.now, got, tt.want)
			}
		})
	}
}
