package checkout_test

import (
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// A CPF with valid check digits, and another one.
const (
	payerCPF = "52998224725"
	otherCPF = "11144477735"
)

// The page of a real charge on a real server: merchant name from the
// account, description from metadata, the BR Code and QR of the charge.
func TestCheckoutOnServer(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Café do Porto")
	ch := createCharge(t, srv, acct.TestKey, map[string]any{
		"amount": 4590, "payment_method": "pix", "description": "2 cafés e 1 pão de queijo",
	})
	if !strings.HasSuffix(ch.CheckoutURL, "/checkout/"+strings.TrimPrefix(ch.ID, "ch_")) {
		t.Fatalf("checkout_url %q does not end with the raw id of %s", ch.CheckoutURL, ch.ID)
	}
	res, body := fetch(t, ch.CheckoutURL)
	if res.Status != http.StatusOK {
		t.Fatalf("page: %d", res.Status)
	}
	for _, want := range []string{
		"Café do Porto", "R$ 45,90", "2 cafés e 1 pão de queijo",
		">" + ch.Pix.BRCode + "</textarea>",
		`src="` + ch.Pix.QRCodeURL + `"`,
	} {
		if !strings.Contains(body, want) {
			t.Errorf("page lacks %q", want)
		}
	}

	status := func() map[string]any {
		t.Helper()
		res, body := fetch(t, ch.CheckoutURL+"/status")
		if res.Status != http.StatusOK {
			t.Fatalf("status: %d %s", res.Status, body)
		}
		var m map[string]any
		if err := json.Unmarshal([]byte(body), &m); err != nil {
			t.Fatal(err)
		}
		return m
	}
	if got := status(); got["status"] != "pending" || got["expires_at"] != ch.Pix.ExpiresAt || got["methods_ready"] != true || len(got) != 3 {
		t.Errorf("status before paying: %v", got)
	}
	payCharge(t, srv, acct.TestKey, ch.ID, nil)
	if got := status(); got["status"] != "paid" {
		t.Errorf("status after paying: %v", got)
	}

	expired := createCharge(t, srv, acct.TestKey, map[string]any{"amount": 100, "payment_method": "pix"})
	expireCharge(t, srv, acct.TestKey, expired.ID)
	_, body = fetch(t, expired.CheckoutURL)
	if !strings.Contains(body, `data-status="expired"`) || !strings.Contains(body, "Este Pix expirou") {
		t.Errorf("expired charge page: %.400s", body)
	}

	// The raw id of another surface's form is not an address.
	if res, _ := fetch(t, strings.Replace(ch.CheckoutURL, "/checkout/", "/checkout/ch_", 1)); res.Status != http.StatusNotFound {
		t.Errorf("ch_ form: %d", res.Status)
	}
}

// The page is public: the payer-lock document, the customer, fees, the
// provider, the account and every id but the raw one in the address stay
// out of it, in every state.
func TestCheckoutShowsNothingPrivate(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	acct := srv.NewAccount(t, "Loja Reservada")

	create := func() apiCharge {
		return createCharge(t, srv, acct.TestKey, map[string]any{
			"amount":         123456,
			"payment_method": "pix",
			"description":    "Pedido 991",
			"customer": map[string]any{
				"name": "Maria Confidencial", "document": payerCPF,
				"email": "maria.confidencial@example.com", "phone": "+5511987654321",
			},
			"expected_payer_tax_id": payerCPF,
			"metadata":              map[string]any{"internal_ref": "segredo-interno-77"},
		})
	}
	paid := create()
	payCharge(t, srv, acct.TestKey, paid.ID, map[string]any{"payer_document": payerCPF, "payer_name": "Maria Pagadora"})
	returned := create()
	payCharge(t, srv, acct.TestKey, returned.ID, map[string]any{"payer_document": otherCPF, "payer_name": "Outro Pagador"})
	review := create()
	payCharge(t, srv, acct.TestKey, review.ID, nil)
	pending := create()

	for _, tt := range []struct {
		ch     apiCharge
		status string
	}{{pending, "pending"}, {paid, "paid"}, {returned, "refunded"}, {review, "processing"}} {
		for _, lang := range []string{"pt-BR", "en"} {
			_, body := fetch(t, tt.ch.CheckoutURL, "Accept-Language", lang)
			_, status := fetch(t, tt.ch.CheckoutURL+"/status")
			if !strings.Contains(body, `data-status="`+tt.status+`"`) {
				t.Errorf("%s: page is not in state %s", tt.status, tt.status)
			}
			// The raw id (the address) and the BR Code are public by
			// design; random base32 could spell a word below by chance.
			raw := strings.TrimPrefix(tt.ch.ID, "ch_")
			body = strings.ReplaceAll(strings.ReplaceAll(body, tt.ch.Pix.BRCode, ""), raw, "")
			lower := strings.ToLower(body + status)
			for _, secret := range []string{
				payerCPF, "529.982.247-25", otherCPF, "111.444.777-35",
				"maria confidencial", "maria pagadora", "outro pagador",
				"maria.confidencial@example.com", "987654321",
				"segredo-interno-77", "internal_ref",
				"sandbox", strings.ToLower(acct.AccountID), "acct_",
				"ch_", "tx_", "e2e", "end_to_end",
				// Fees of R$ 1.234,56 at 50 + 49 bps, and the net amount.
				"6,17", "6,05", "6.17", "6.05", "1.222,34", "1,222.34",
				" fee", "fees", "providerfee", "platformfee", "netamount", "taxa", "tarifa",
			} {
				if strings.Contains(lower, strings.ToLower(secret)) {
					t.Errorf("%s (%s): the page shows %q", tt.status, lang, secret)
				}
			}
			if txid := tt.ch.Pix.TxID; txid != "" && strings.Contains(body, txid) {
				t.Errorf("%s: the page shows the txid", tt.status)
			}
		}
	}
}
