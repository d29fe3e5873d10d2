package domain_test

import (
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

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
		wantField domain.Field
		wantCode  string
	}{
		{"id not a raw id", func(p *domain.NewChargeParams) { p.ID = "ch_" + chargeRawID }, domain.FieldID, domain.CodeParameterInvalid},
		{"no account", func(p *domain.NewChargeParams) { p.AccountID = "" }, domain.FieldID, domain.CodeParameterInvalid},
		{"unknown mode", func(p *domain.NewChargeParams) { p.Mode = "prod" }, domain.FieldID, domain.CodeParameterInvalid},
		{"no time", func(p *domain.NewChargeParams) { p.Now = time.Time{} }, domain.FieldID, domain.CodeParameterInvalid},
		{"zero amount", func(p *domain.NewChargeParams) { p.Amount = 0 }, domain.FieldAmount, domain.CodeParameterInvalid},
		{"negative amount", func(p *domain.NewChargeParams) { p.Amount = -1 }, domain.FieldAmount, domain.CodeParameterInvalid},
		{"amount above the maximum", func(p *domain.NewChargeParams) { p.Amount = domain.MaxAmount + 1 }, domain.FieldAmount, domain.CodeParameterInvalid},
		{"currency too short", func(p *domain.NewChargeParams) { p.Currency = "BR" }, domain.FieldCurrency, domain.CodeParameterInvalid},
		{"currency with a symbol", func(p *domain.NewChargeParams) { p.Currency = "R$L" }, domain.FieldCurrency, domain.CodeParameterInvalid},
		{"pix in another currency", func(p *domain.NewChargeParams) { p.Currency = "USD" }, domain.FieldCurrency, domain.CodeParameterInvalid},
		{"no method", func(p *domain.NewChargeParams) { p.Methods = nil }, domain.FieldPaymentMethod, domain.CodeParameterMissing},
		{"unknown method", func(p *domain.NewChargeParams) { p.Methods = []domain.Method{"pix"} }, domain.FieldPaymentMethod, domain.CodeParameterInvalid},
		{"description too long", func(p *domain.NewChargeParams) { p.Description = strings.Repeat("é", domain.MaxDescriptionLen+1) }, domain.FieldDescription, domain.CodeParameterInvalid},
		{"expires_in below the minimum", func(p *domain.NewChargeParams) { p.ExpiresIn = &short }, domain.FieldExpiresIn, domain.CodeParameterInvalid},
		{"customer name too long", func(p *domain.NewChargeParams) { p.Customer.Name = strings.Repeat("a", 201) }, domain.FieldCustomerName, domain.CodeParameterInvalid},
		{"customer phone too long", func(p *domain.NewChargeParams) { p.Customer.Phone = strings.Repeat("1", 201) }, domain.FieldCustomerPhone, domain.CodeParameterInvalid},
		{"customer id too long", func(p *domain.NewChargeParams) {
			p.CustomerRef = strings.Repeat("ü", domain.MaxCustomerFieldLen+1)
		}, domain.FieldCustomerRef, domain.CodeParameterInvalid},
		{"unknown method after a repeat", func(p *domain.NewChargeParams) {
			p.Methods = []domain.Method{domain.MethodPix, domain.MethodPix, "pix"}
		}, domain.FieldPaymentMethod, domain.CodeParameterInvalid},
		{"customer email invalid", func(p *domain.NewChargeParams) { p.Customer.Email = "maria@" }, domain.FieldCustomerEmail, domain.CodeParameterInvalid},
		{"customer email with display name", func(p *domain.NewChargeParams) { p.Customer.Email = "Maria <maria@example.com>" }, domain.FieldCustomerEmail, domain.CodeParameterInvalid},
		{"customer email without a domain dot", func(p *domain.NewChargeParams) { p.Customer.Email = "maria@localhost" }, domain.FieldCustomerEmail, domain.CodeParameterInvalid},
		{"strict document invalid", func(p *domain.NewChargeParams) {
			p.StrictDocument, p.Customer.Document = true, "52998224724"
		}, domain.FieldCustomerDocument, domain.CodeParameterInvalid},
		{"payer lock without customer name", func(p *domain.NewChargeParams) { p.ExpectedPayer = chargeCPF }, domain.FieldCustomerName, domain.CodeParameterMissing},
		{"payer lock with blank customer name", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name = chargeCPF, "   "
		}, domain.FieldCustomerName, domain.CodeParameterMissing},
		{"payer lock with a bad check digit", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name = "52998224724", "Maria"
		}, domain.FieldExpectedPayer, domain.CodeParameterInvalid},
		{"payer lock differing from customer.document", func(p *domain.NewChargeParams) {
			p.ExpectedPayer, p.Customer.Name, p.Customer.Document = chargeCPF, "Maria", chargeCPF2
		}, domain.FieldExpectedPayer, domain.CodeParameterInvalid},
		{"metadata key too long", func(p *domain.NewChargeParams) {
			p.Metadata = map[string]any{strings.Repeat("k", domain.MaxMetadataKeyLen+1): 1}
		}, domain.FieldMetadata, domain.CodeParameterInvalid},
		{"too many metadata keys", func(p *domain.NewChargeParams) { p.Metadata = many(domain.MaxMetadataKeys + 1) }, domain.FieldMetadata, domain.CodeParameterInvalid},
		{"description pushes metadata over the limit", func(p *domain.NewChargeParams) {
			p.Metadata, p.Description = many(domain.MaxMetadataKeys), "order 1"
		}, domain.FieldMetadata, domain.CodeParameterInvalid},
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
			if ve.Field != tt.wantField || ve.Code != tt.wantCode {
				t.Errorf("error field, code = %q, %q; want %q, %q", ve.Field, ve.Code, tt.wantField, tt.wantCode)
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
			p.CustomerRef = strings.Repeat("ü", domain.MaxCustomerFieldLen)
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

// The methods are a set: however often a method is repeated, the charge
// keeps it once, where it was first named, so a request's repeats never
// reach the row, the events or the answers.
func TestNewChargeKeepsEachMethodOnce(t *testing.T) {
	t.Parallel()
	repeated := make([]domain.Method, 0, 20001)
	for range 10000 {
		repeated = append(repeated, domain.MethodCreditCard, domain.MethodPix)
	}
	repeated = append(repeated, domain.MethodBoleto)
	c := chargeNew(t, func(p *domain.NewChargeParams) { p.Methods = repeated })
	got := c.Methods()
	want := []domain.Method{domain.MethodCreditCard, domain.MethodPix, domain.MethodBoleto}
	if !slices.Equal(got, want) {
		t.Fatalf("methods = %v, want %v", got, want)
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
