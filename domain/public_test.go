package domain_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func publicJSON(t *testing.T, p domain.PublicCharge) (raw []byte, obj map[string]json.RawMessage) {
	t.Helper()
	raw, err := json.Marshal(p)
	if err != nil {
		t.Fatalf("marshal public charge: %v", err)
	}
	if err := json.Unmarshal(raw, &obj); err != nil {
		t.Fatal(err)
	}
	return raw, obj
}

// The public charge is an allowlist: exactly these keys, whatever the
// charge holds inside (provider, fees, payer document, account...).
func TestPublicChargeKeys(t *testing.T) {
	t.Parallel()
	always := []string{"id", "object", "amount", "currency", "status", "payment_method", "customer",
		"checkout_url", "settlement", "metadata", "created_at"}
	with := func(extra ...string) []string { return eventSorted(append(slices.Clone(always), extra...)...) }
	settle := func(lock, payer string) func(t *testing.T) *domain.Charge {
		return func(t *testing.T) *domain.Charge {
			c := chargeOpen(t, lock)
			if _, err := c.SettlePix(chargePayment(payer), chargePixFees); err != nil {
				t.Fatal(err)
			}
			return c
		}
	}
	tests := []struct {
		name           string
		charge         func(t *testing.T) *domain.Charge
		wantKeys       []string
		wantPixKeys    []string
		wantSettlement string
		wantStatus     string
	}{
		{"being created, no pix yet", func(t *testing.T) *domain.Charge { return chargeNew(t, nil) },
			with(), nil, `{}`, "pending"},
		{"open", func(t *testing.T) *domain.Charge { return chargeOpen(t, "") },
			with("pix"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{}`, "pending"},
		{"open without a provider txid", func(t *testing.T) *domain.Charge {
			c := chargeNew(t, nil)
			if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode}, "sandbox", "ref", chargeT0); err != nil {
				t.Fatal(err)
			}
			return c
		}, with("pix"), eventSorted("br_code", "qr_code_url", "expires_at"), `{}`, "pending"},
		{"open under a payer lock", func(t *testing.T) *domain.Charge { return chargeOpen(t, chargeCPF) },
			with("pix", "expected_payer_tax_id"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{}`, "pending"},
		{"paid", settle("", chargeCPF2),
			with("pix"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{"end_to_end_id":"` + chargeE2E + `"}`, "paid"},
		{"paid under a matching lock", settle(chargeCPF, chargeCPF),
			with("pix", "expected_payer_tax_id"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{"end_to_end_id":"` + chargeE2E + `"}`, "paid"},
		{"paid by another document: held until returned, not credited", settle(chargeCPF, chargeCPF2),
			with("pix", "expected_payer_tax_id"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{}`, "processing"},
		{"payer undisclosed: held, not credited", settle(chargeCPF, ""),
			with("pix", "expected_payer_tax_id"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{}`, "processing"},
		{"return completed: still not credited", func(t *testing.T) *domain.Charge {
			c := settle(chargeCPF, chargeCPF2)(t)
			if err := c.ConfirmReturn(chargeT0.Add(time.Hour)); err != nil {
				t.Fatal(err)
			}
			return c
		}, with("pix", "expected_payer_tax_id"), eventSorted("br_code", "qr_code_url", "expires_at", "txid"), `{}`, "refunded"},
		{"refused by the acquirer", func(t *testing.T) *domain.Charge {
			c := chargeNew(t, nil)
			if err := c.Refuse(chargeT0); err != nil {
				t.Fatal(err)
			}
			return c
		}, with(), nil, `{}`, "failed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := tt.charge(t)
			raw, obj := publicJSON(t, c.Public(chargeLinks))
			if got := eventKeys(t, raw); !slices.Equal(got, tt.wantKeys) {
				t.Errorf("keys = %v, want %v", got, tt.wantKeys)
			}
			if tt.wantPixKeys != nil {
				if got := eventKeys(t, obj["pix"]); !slices.Equal(got, tt.wantPixKeys) {
					t.Errorf("pix keys = %v, want %v", got, tt.wantPixKeys)
				}
			}
			if got := string(obj["settlement"]); got != tt.wantSettlement {
				t.Errorf("settlement = %s, want %s", got, tt.wantSettlement)
			}
			if got := string(obj["status"]); got != `"`+tt.wantStatus+`"` {
				t.Errorf("status = %s, want %q", got, tt.wantStatus)
			}
			if got := string(obj["metadata"]); got != `{}` {
				t.Errorf("metadata = %s, want {} (never null)", got)
			}
			// Only the fields the merchant sent: the lock fixtures send a name.
			wantCustomer := `{}`
			if c.ExpectedPayer() != "" {
				wantCustomer = `{"name":"Maria Silva"}`
			}
			if got := string(obj["customer"]); got != wantCustomer {
				t.Errorf("customer = %s, want %s", got, wantCustomer)
			}
		})
	}
}

func TestPublicChargeValues(t *testing.T) {
	t.Parallel()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Now = chargeT0.Add(123*time.Millisecond + 456*time.Microsecond)
		p.Description = "Pedido 42"
		p.Customer = domain.Customer{Name: "Maria Silva", Document: "529.982.247-25", Email: "maria@example.com", Phone: "+5511999999999"}
		p.ExpectedPayer = chargeCPF
	})
	if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: chargeT0.Add(30 * time.Minute)}, "sandbox", "prov-ref-9", chargeT0); err != nil {
		t.Fatal(err)
	}
	p := c.Public(domain.Links{CheckoutBase: "https://pay.quita.test/c/"})
	raw, _ := publicJSON(t, p)
	var got struct {
		ID            string            `json:"id"`
		Object        string            `json:"object"`
		Amount        int64             `json:"amount"`
		Currency      string            `json:"currency"`
		PaymentMethod string            `json:"payment_method"`
		Customer      map[string]string `json:"customer"`
		Pix           map[string]string `json:"pix"`
		CheckoutURL   string            `json:"checkout_url"`
		Metadata      map[string]any    `json:"metadata"`
		Expected      string            `json:"expected_payer_tax_id"`
		CreatedAt     string            `json:"created_at"`
	}
	if err := json.Unmarshal(raw, &got); err != nil {
		t.Fatal(err)
	}
	if got.ID != "ch_"+chargeRawID || got.Object != "charge" || got.Amount != chargeAmount || got.Currency != "BRL" || got.PaymentMethod != "pix" {
		t.Errorf("id %q object %q amount %d currency %q method %q", got.ID, got.Object, got.Amount, got.Currency, got.PaymentMethod)
	}
	if got.CheckoutURL != "https://pay.quita.test/c/"+chargeRawID || strings.Contains(got.CheckoutURL, "ch_") {
		t.Errorf("checkout_url = %q, want the base and the raw id, one slash", got.CheckoutURL)
	}
	wantCustomer := map[string]string{"name": "Maria Silva", "document": "529.982.247-25", "email": "maria@example.com", "phone": "+5511999999999"}
	if len(got.Customer) != len(wantCustomer) {
		t.Errorf("customer = %v, want %v", got.Customer, wantCustomer)
	}
	for k, v := range wantCustomer {
		if got.Customer[k] != v {
			t.Errorf("customer.%s = %q, want %q", k, got.Customer[k], v)
		}
	}
	wantPix := map[string]string{
		"br_code": chargeBRCode, "txid": chargePixTxID, "expires_at": "2026-11-22T12:30:00.000Z",
		"qr_code_url": "https://pay.quita.test/c/" + chargeRawID + "/qr.png",
	}
	for k, v := range wantPix {
		if got.Pix[k] != v {
			t.Errorf("pix.%s = %q, want %q", k, got.Pix[k], v)
		}
	}
	if got.ID == got.Pix["txid"] || strings.TrimPrefix(got.ID, "ch_") == got.Pix["txid"] {
		t.Errorf("id %q equals pix.txid", got.ID)
	}
	if got.Metadata["description"] != "Pedido 42" {
		t.Errorf("metadata = %v, want the description folded in", got.Metadata)
	}
	if got.Expected != chargeCPF {
		t.Errorf("expected_payer_tax_id = %q, want %q", got.Expected, chargeCPF)
	}
	if got.CreatedAt != "2026-11-22T12:00:00.123Z" {
		t.Errorf("created_at = %q, want 2026-11-22T12:00:00.123Z", got.CreatedAt)
	}
	for _, secret := range []string{"sandbox", "prov-ref-9", "acct_1"} {
		if strings.Contains(string(raw), secret) {
			t.Errorf("public charge leaks internal value %q: %s", secret, raw)
		}
	}
}

// The real payer's document and name stay inside Quita, even when the bank
// disclosed them and whatever the payer-lock outcome.
func TestPublicChargeHidesThePayer(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"", chargeCPF} {
		c := chargeOpen(t, lock)
		p := chargePayment("111.444.777-35")
		p.PayerName = "Joao Pagador"
		if _, err := c.SettlePix(p, chargePixFees); err != nil {
			t.Fatal(err)
		}
		raw, _ := publicJSON(t, c.Public(chargeLinks))
		for _, secret := range []string{chargeCPF2, "111.444.777-35", "Joao Pagador", `"fees"`, `"provider`, "9901"} {
			if strings.Contains(string(raw), secret) {
				t.Errorf("lock %q: public charge contains %q: %s", lock, secret, raw)
			}
		}
	}
}

func TestPublicChargeMasked(t *testing.T) {
	t.Parallel()
	c := chargeNew(t, func(p *domain.NewChargeParams) {
		p.Customer = domain.Customer{Name: "Maria", Document: "529.982.247-25", Email: "maria@example.com"}
		p.ExpectedPayer = chargeCPF
	})
	full := c.Public(chargeLinks)
	masked := full.Masked()
	if masked.Customer.Document != "*********25" || masked.ExpectedPayerTaxID != "*********25" {
		t.Errorf("masked document %q expected payer %q, want *********25", masked.Customer.Document, masked.ExpectedPayerTaxID)
	}
	if full.Customer.Document != "529.982.247-25" || full.ExpectedPayerTaxID != chargeCPF {
		t.Errorf("Masked changed the original: %q %q", full.Customer.Document, full.ExpectedPayerTaxID)
	}
	masked.Customer.Document, masked.ExpectedPayerTaxID = full.Customer.Document, full.ExpectedPayerTaxID
	a, _ := json.Marshal(full)
	b, _ := json.Marshal(masked)
	if string(a) != string(b) {
		t.Errorf("Masked changed more than the documents:\n%s\n%s", a, b)
	}

	none := chargeNew(t, nil).Public(chargeLinks).Masked()
	if none.Customer.Document != "" || none.ExpectedPayerTaxID != "" {
		t.Errorf("masking empty documents gave %q %q", none.Customer.Document, none.ExpectedPayerTaxID)
	}
}

func TestMaskDocument(t *testing.T) {
	t.Parallel()
	tests := []struct{ in, want string }{
		{"", ""},
		{"52998224725", "*********25"},
		{"529.982.247-25", "*********25"},
		{"11.444.777/0001-61", "************61"},
		{"12.abc.345/01de-35", "************35"},
		{"PT123456789", "*********89"},
		{"ab", "**"},
		{"a", "*"},
		{"...", ""},
	}
	for _, tt := range tests {
		got := domain.MaskDocument(tt.in)
		if got != tt.want {
			t.Errorf("MaskDocument(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

func TestTimestampMarshal(t *testing.T) {
	t.Parallel()
	tests := []struct {
		in   time.Time
		want string
	}{
		{time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC), "2026-11-22T12:00:00.000Z"},
		{time.Date(2026, 11, 22, 9, 0, 0, 0, time.FixedZone("BRT", -3*60*60)), "2026-11-22T12:00:00.000Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 999_999_999, time.UTC), "2026-01-02T03:04:05.999Z"},
		{time.Date(2026, 1, 2, 3, 4, 5, 1_000_000, time.UTC), "2026-01-02T03:04:05.001Z"},
		{time.Date(2026, 12, 31, 23, 30, 0, 0, time.FixedZone("", -90*60)), "2027-01-01T01:00:00.000Z"},
	}
	for _, tt := range tests {
		b, err := json.Marshal(domain.Timestamp(tt.in))
		if err != nil || string(b) != `"`+tt.want+`"` {
			t.Errorf("marshal %v = %s, %v; want %q", tt.in, b, err, tt.want)
		}
		if _, err := time.Parse(domain.TimestampLayout, tt.want); err != nil {
			t.Errorf("TimestampLayout cannot read its own output %q: %v", tt.want, err)
		}
	}
}

func TestTimestampUnmarshal(t *testing.T) {
	t.Parallel()
	want := time.Date(2026, 11, 22, 12, 0, 0, 500_000_000, time.UTC)
	for _, in := range []string{"2026-11-22T12:00:00.5Z", "2026-11-22T09:00:00.500-03:00", "2026-11-22T12:00:00.500000000+00:00"} {
		var ts domain.Timestamp
		if err := ts.UnmarshalText([]byte(in)); err != nil {
			t.Errorf("UnmarshalText(%q): %v", in, err)
			continue
		}
		if got := time.Time(ts); !got.Equal(want) || got.Location() != time.UTC {
			t.Errorf("UnmarshalText(%q) = %v, want %v in UTC", in, got, want)
		}
	}
	for _, in := range []string{"", "2026-11-22", "2026-11-22 12:00:00Z", "1700000000", "2026-11-22T12:00:00"} {
		var ts domain.Timestamp
		if err := ts.UnmarshalText([]byte(in)); err == nil {
			t.Errorf("UnmarshalText(%q) = %v, want an error", in, time.Time(ts))
		}
	}
}

func TestMaskDocumentsInJSON(t *testing.T) {
	in := `{"id":"evt_1","data":{"object":{"customer":{"name":"Maria","document":"529.982.247-25"},` +
		`"expected_payer_tax_id":"52998224725","description":"\"document\":\"11144477735\"",` +
		`"metadata":{"note":"x"}}},"legacy":{"customerDocument":"11222333000181","amount":100}}`
	want := `{"id":"evt_1","data":{"object":{"customer":{"name":"Maria","document":"*********25"},` +
		`"expected_payer_tax_id":"*********25","description":"\"document\":\"11144477735\"",` +
		`"metadata":{"note":"x"}}},"legacy":{"customerDocument":"************81","amount":100}}`
	if got := string(domain.MaskDocumentsInJSON([]byte(in))); got != want {
		t.Errorf("MaskDocumentsInJSON:\n got %s\nwant %s", got, want)
	}
	if !json.Valid([]byte(want)) {
		t.Fatal("the expected output is not JSON")
	}
}
