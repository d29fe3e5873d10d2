package domain_test

import (
	"errors"
	"strings"
	"testing"

	"github.com/quitapix/quita/domain"
)

// An e-mail Pix key follows the DICT's rule: ASCII only, at most 77
// characters, local@domain with a dotted domain. A bidirectional override
// (which shows the key reversed), a control character, a non-ASCII letter
// — even one strings.ToLower turns into ASCII — or a quoted local part is
// refused, whether the type is given or detected from the @.
func TestEmailPixKeyFollowsTheDICTRule(t *testing.T) {
	t.Parallel()
	at77 := strings.Repeat("a", 40) + "@" + strings.Repeat("b", 32) + ".com"
	for _, raw := range []string{
		"joana@example.com", "Joana.Silva+pix@Example.COM.br", "a_b-c!#$%&'*/=?^`{|}~@sub-1.example.com", at77,
	} {
		for _, typ := range []domain.PixKeyType{"", domain.PixKeyEmail} {
			k, err := domain.ParsePixKey(raw, typ)
			if err != nil || k.Type != domain.PixKeyEmail || k.Value != strings.ToLower(raw) {
				t.Errorf("ParsePixKey(%q, %q) = %+v, %v", raw, typ, k, err)
			}
		}
	}
	for _, raw := range []string{
		"a@exa\u202emple.com",         // right-to-left override
		"a\u2066b@example.com",        // left-to-right isolate
		"a@example.com\u200f",         // right-to-left mark
		"joana@exa\u0007mple.com",     // BEL
		"a\tb@example.com",            // tab
		"joão@example.com",            // non-ASCII letter
		"\u212aelvin@example.com",     // Kelvin sign, "k" once lowered
		"a@exámple.com",               // non-ASCII domain
		`"a b"@example.com`,           // quoted local part
		"a b@example.com",             // space
		"a@example",                   // no dot in the domain
		"a..b@example.com",            // empty run in the local part
		".a@example.com",              // leading dot
		"a@-example.com",              // label starting with a hyphen
		"a@example..com",              // empty label
		"a@b@example.com",             // two @
		"a@[127.0.0.1]",               // address literal
		"a(comment)@example.com",      // comment
		at77[:len(at77)-4] + "x.com.", // trailing dot
		"a" + at77,                    // 78 characters
	} {
		for _, typ := range []domain.PixKeyType{"", domain.PixKeyEmail} {
			_, err := domain.ParsePixKey(raw, typ)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Field != domain.FieldPixKey {
				t.Errorf("ParsePixKey(%q, %q) = %v, want a validation error on the pix key", raw, typ, err)
			} else if strings.Contains(err.Error(), raw) {
				t.Errorf("the error repeats the key: %v", err)
			}
		}
	}
}

// Free texts a client sends are refused with a control character (other
// than tabs and line breaks in a multi-line text) or a bidirectional
// formatting character; the error names the field and never repeats the
// text. StripControls drops the same characters from a one-line text.
func TestFreeTextControls(t *testing.T) {
	t.Parallel()
	bad := []string{"\u202e", "\u202a", "\u202b", "\u202c", "\u202d", "\u2066", "\u2067", "\u2068", "\u2069",
		"\u200e", "\u200f", "\u061c", "\x00", "\x07", "\x1b", "\x7f", "\u0085", "\u009f"}
	for _, c := range bad {
		for _, multiline := range []bool{false, true} {
			s := "Pedido " + c + " 42"
			err := domain.CheckText(domain.FieldDescription, s, multiline)
			var ve *domain.ValidationError
			if !errors.As(err, &ve) || ve.Field != domain.FieldDescription || strings.Contains(err.Error(), "Pedido") {
				t.Errorf("CheckText(%q, multiline %v) = %v", s, multiline, err)
			}
			if got := domain.StripControls(s); got != "Pedido  42" {
				t.Errorf("StripControls(%q) = %q", s, got)
			}
		}
	}
	for _, s := range []string{"Linha 1\nLinha 2\r\n\tfim", "Pão de queijo — açaí 😀 日本 العربية"} {
		if err := domain.CheckText(domain.FieldDescription, s, true); err != nil {
			t.Errorf("multi-line %q: %v", s, err)
		}
	}
	if err := domain.CheckText(domain.FieldCustomerName, "Maria\nda Silva", false); err == nil {
		t.Error("a one-line text took a line break")
	}
	if got := domain.StripControls("Maria\tda\nSilva\u202e"); got != "MariadaSilva" {
		t.Errorf("StripControls = %q", got)
	}
}

// Where free text enters the domain: a charge's description, customer
// fields, customerId and metadata (keys, and strings at any depth) and a
// payout's description refuse control and bidirectional formatting
// characters; multi-line texts keep their line breaks.
func TestFreeTextsRefuseControls(t *testing.T) {
	t.Parallel()
	charge := func(edit func(*domain.NewChargeParams)) error {
		p := domain.NewChargeParams{ID: strings.Repeat("a", domain.RawIDLen), AccountID: "acct_1", Mode: domain.ModeTest,
			Amount: 100, Currency: "BRL", Methods: []domain.Method{domain.MethodPix}, Now: payoutNow}
		edit(&p)
		_, err := domain.NewCharge(p)
		return err
	}
	rlo := "\u202e"
	for name, c := range map[string]struct {
		edit  func(*domain.NewChargeParams)
		field domain.Field
	}{
		"description":       {func(p *domain.NewChargeParams) { p.Description = "a" + rlo }, domain.FieldDescription},
		"customer name":     {func(p *domain.NewChargeParams) { p.Customer.Name = "Maria" + rlo }, domain.FieldCustomerName},
		"customer name NUL": {func(p *domain.NewChargeParams) { p.Customer.Name = "Maria\x00" }, domain.FieldCustomerName},
		"customer email":    {func(p *domain.NewChargeParams) { p.Customer.Email = "a@exa" + rlo + "mple.com" }, domain.FieldCustomerEmail},
		"customer phone":    {func(p *domain.NewChargeParams) { p.Customer.Phone = "+55\n11" }, domain.FieldCustomerPhone},
		"customerId":        {func(p *domain.NewChargeParams) { p.CustomerRef = "u" + rlo }, domain.FieldCustomerRef},
		"metadata key":      {func(p *domain.NewChargeParams) { p.Metadata = map[string]any{"k" + rlo: "v"} }, domain.FieldMetadata},
		"metadata value":    {func(p *domain.NewChargeParams) { p.Metadata = map[string]any{"k": "v" + rlo} }, domain.FieldMetadata},
		"nested metadata": {func(p *domain.NewChargeParams) {
			p.Metadata = map[string]any{"o": map[string]any{"a": []any{"x\u2067"}}}
		}, domain.FieldMetadata},
		"nested key": {func(p *domain.NewChargeParams) { p.Metadata = map[string]any{"o": map[string]any{"\u200fa": 1}} }, domain.FieldMetadata},
	} {
		err := charge(c.edit)
		var ve *domain.ValidationError
		if !errors.As(err, &ve) || ve.Field != c.field {
			t.Errorf("%s: %v, want a validation error on %s", name, err, c.field)
		}
	}
	if err := charge(func(p *domain.NewChargeParams) {
		p.Description = "Linha 1\nLinha 2\tfim"
		p.Metadata = map[string]any{"nota": "a\r\nb"}
	}); err != nil {
		t.Errorf("line breaks in a description and a metadata value: %v", err)
	}

	k, _ := domain.ParsePixKey("52998224725", "")
	_, err := domain.NewPayout(domain.NewPayoutParams{ID: strings.Repeat("a", domain.RawIDLen), AccountID: "acct_1",
		Mode: domain.ModeTest, Amount: 100, Key: k, Description: "saque" + rlo, SendID: domain.DeriveTxID("x"), Now: payoutNow})
	var ve *domain.ValidationError
	if !errors.As(err, &ve) || ve.Field != domain.FieldDescription {
		t.Errorf("payout description: %v", err)
	}
	// A refund's destination key is stored whatever the strategy.
	if err := domain.CheckRefundDestinationKey("a@exa" + rlo + "mple.com"); !errors.As(err, &ve) || ve.Field != domain.FieldRefundKey {
		t.Errorf("refund destination key: %v", err)
	}
}
