package e2e_test

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"net/http"
	"regexp"
	"slices"
	"strings"
	"testing"
)

var (
	txidPattern = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)
	pngMagic    = []byte("\x89PNG\r\n\x1a\n")
	// Words no key of the public charge may contain: internal ids,
	// provider data, fees and costs.
	forbiddenKeyParts = []string{"account", "acct", "user", "provider", "acquirer", "fee", "cost", "net",
		"raw", "internal", "mode", "live", "ref", "location", "payer_document", "payer_name", "webhook"}
)

// assertKeys checks that object m has exactly want as keys.
func assertKeys(t *testing.T, where string, m map[string]json.RawMessage, want ...string) {
	t.Helper()
	slices.Sort(want)
	if got := sortedKeys(m); !slices.Equal(got, want) {
		t.Errorf("%s keys %v, want %v", where, got, want)
	}
}

func object(t *testing.T, raw json.RawMessage) map[string]json.RawMessage {
	t.Helper()
	var m map[string]json.RawMessage
	if err := json.Unmarshal(raw, &m); err != nil {
		t.Fatalf("not an object: %s", raw)
	}
	return m
}

// assertNoForbiddenKeys walks every key outside metadata.
func assertNoForbiddenKeys(t *testing.T, body []byte) {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatal(err)
	}
	var walk func(path string, v any)
	walk = func(path string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for k, val := range x {
				if path == "" && k == "metadata" {
					continue
				}
				for _, bad := range forbiddenKeyParts {
					if strings.Contains(strings.ToLower(k), bad) && k != "expected_payer_tax_id" {
						t.Errorf("public charge has key %s%s", path, k)
					}
				}
				walk(path+k+".", val)
			}
		case []any:
			for _, e := range x {
				walk(path, e)
			}
		}
	}
	walk("", v)
}

// The public charge is an allowlist: the exact key sets, nothing internal,
// for pending and paid charges.
func TestPublicChargeShape(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Shape")
		full := map[string]any{
			"amount": 10000, "payment_method": "pix", "description": "Camiseta",
			"customer":              map[string]any{"name": "Carla Dias", "document": "111.444.777-35", "email": "carla@example.com", "phone": "+5521988887777"},
			"expected_payer_tax_id": "11144477735",
			"metadata":              map[string]any{"sku": "A-1", "_secret": "strip me", "quita_internal": "strip me too"},
		}
		minimal := pixBody(10000)
		allTop := []string{"id", "object", "amount", "currency", "status", "payment_method", "customer", "pix",
			"checkout_url", "settlement", "metadata", "expected_payer_tax_id", "created_at"}

		check := func(t *testing.T, r *response, wantLock bool, wantCustomer []string, paid bool) charge {
			t.Helper()
			top := r.keys(t)
			want := allTop
			if !wantLock {
				want = slices.DeleteFunc(slices.Clone(allTop), func(k string) bool { return k == "expected_payer_tax_id" })
			}
			assertKeys(t, "charge", top, want...)
			assertKeys(t, "customer", object(t, top["customer"]), wantCustomer...)
			assertKeys(t, "pix", object(t, top["pix"]), "br_code", "qr_code_url", "expires_at", "txid")
			if paid {
				assertKeys(t, "settlement", object(t, top["settlement"]), "end_to_end_id")
			} else {
				assertKeys(t, "settlement", object(t, top["settlement"]))
			}
			assertNoForbiddenKeys(t, r.Body)
			for _, leak := range []string{a.AccountID, a.UserID, "sandbox", "acct_", "usr_", "key_", a.TestKey, a.LiveKey} {
				if leak != "" && bytes.Contains(r.Body, []byte(leak)) {
					t.Errorf("public charge contains %q: %s", leak, r.Body)
				}
			}
			c := r.charge(t)
			if c.Pix.TxID == c.ID || c.Pix.TxID == c.raw() || !txidPattern.MatchString(c.Pix.TxID) {
				t.Errorf("txid %q (id %s): want [a-zA-Z0-9]{26,35} and different from the id", c.Pix.TxID, c.ID)
			}
			if !strings.HasSuffix(c.CheckoutURL, "/"+c.raw()) || strings.Contains(c.CheckoutURL, "ch_") {
				t.Errorf("checkout_url %q must end with the raw id %s", c.CheckoutURL, c.raw())
			}
			if !strings.HasPrefix(c.Pix.QRCodeURL, e.srv.URL+"/checkout/") {
				t.Errorf("qr_code_url %q is not under the checkout base", c.Pix.QRCodeURL)
			}
			return c
		}

		t.Run("full", func(t *testing.T) {
			r := a.test.create(t, "/charges", full).want(t, http.StatusCreated)
			c := check(t, r, true, []string{"name", "document", "email", "phone"}, false)
			if len(c.Metadata) != 2 || c.Metadata["sku"] != "A-1" || c.Metadata["description"] != "Camiseta" {
				t.Errorf("metadata %v, want sku and description only (reserved keys stripped)", c.Metadata)
			}
			check(t, a.test.get(t, c.ID).want(t, http.StatusOK), true, []string{"name", "document", "email", "phone"}, false)

			// Paid by the expected payer: settlement gains end_to_end_id only.
			paid := a.test.pay(t, c.ID, map[string]any{"payer_document": "11144477735", "payer_name": "Carla Dias"}).want(t, http.StatusOK)
			check(t, paid, true, []string{"name", "document", "email", "phone"}, true)
			g := a.test.get(t, c.raw()).want(t, http.StatusOK)
			if g.charge(t).Status != "paid" {
				t.Fatalf("not paid: %s", g.Body)
			}
			check(t, g, true, []string{"name", "document", "email", "phone"}, true)
		})

		t.Run("minimal", func(t *testing.T) {
			r := a.test.create(t, "/pix/charges", map[string]any{"amount": 10000}).want(t, http.StatusCreated)
			c := check(t, r, false, nil, false)
			paid := a.test.pay(t, c.ID, map[string]any{"payer_document": "52998224725", "payer_name": "Outro Pagador"}).want(t, http.StatusOK)
			check(t, paid, false, nil, true)
			g := a.test.get(t, c.ID).want(t, http.StatusOK)
			check(t, g, false, nil, true)
			// The real payer's document and name are never exposed.
			for _, leak := range []string{"52998224725", "529.982.247-25", "Outro Pagador"} {
				if bytes.Contains(g.Body, []byte(leak)) || bytes.Contains(paid.Body, []byte(leak)) {
					t.Errorf("payer data %q exposed: %s", leak, g.Body)
				}
			}
		})

		t.Run("refunded payer is not exposed", func(t *testing.T) {
			c := a.test.mustCreate(t, full)
			r := a.test.pay(t, c.ID, map[string]any{"payer_document": "52998224725", "payer_name": "Pagador Errado"}).want(t, http.StatusOK)
			if r.charge(t).Status != "refunded" {
				t.Fatalf("want refunded: %s", r.Body)
			}
			check(t, r, true, []string{"name", "document", "email", "phone"}, false)
			for _, leak := range []string{"52998224725", "Pagador Errado"} {
				if bytes.Contains(r.Body, []byte(leak)) {
					t.Errorf("payer data %q exposed: %s", leak, r.Body)
				}
			}
		})

		t.Run("list", func(t *testing.T) {
			l := a.test.do(t, http.MethodGet, "/charges?limit=100", nil, nil).want(t, http.StatusOK)
			assertKeys(t, "list", l.keys(t), "object", "data", "has_more", "next_cursor")
			var items []json.RawMessage
			if err := json.Unmarshal(l.keys(t)["data"], &items); err != nil || len(items) == 0 {
				t.Fatalf("data %s", l.Body)
			}
			for _, it := range items {
				top := object(t, it)
				if len(top) < 12 {
					t.Errorf("list item keys %v", sortedKeys(top))
				}
				assertNoForbiddenKeys(t, it)
			}
			// Documents are masked in lists.
			if bytes.Contains(l.Body, []byte("11144477735")) || bytes.Contains(l.Body, []byte("111.444.777-35")) {
				t.Errorf("list shows a full document: %s", l.Body)
			}
		})

		t.Run("qr code", func(t *testing.T) {
			c := a.test.mustCreate(t, minimal)
			anon := e.client("")
			r := anon.do(t, http.MethodGet, c.Pix.QRCodeURL, nil, nil).want(t, http.StatusOK)
			if ct := r.Header.Get("Content-Type"); ct != "image/png" {
				t.Errorf("Content-Type %q, want image/png", ct)
			}
			if !bytes.HasPrefix(r.Body, pngMagic) {
				t.Errorf("qr_code_url does not serve a PNG (%d bytes)", len(r.Body))
			}
			// Inline base64 on request, the same image.
			g := a.test.get(t, c.ID+"?include=qr_code_base64").want(t, http.StatusOK).charge(t)
			png, err := base64.StdEncoding.DecodeString(g.Pix.QRCodeBase64)
			if err != nil || !bytes.Equal(png, r.Body) {
				t.Errorf("qr_code_base64 (%d bytes, %v) differs from the qr_code_url image", len(png), err)
			}
			// An unknown or malformed id is 404.
			other := strings.Replace(c.Pix.QRCodeURL, c.raw(), strings.Repeat("a", len(c.raw())), 1)
			anon.do(t, http.MethodGet, other, nil, nil).apiErr(t, http.StatusNotFound, "resource_not_found", "")
			anon.do(t, http.MethodGet, strings.Replace(c.Pix.QRCodeURL, c.raw(), c.ID, 1), nil, nil).apiErr(t, http.StatusNotFound, "resource_not_found", "")
		})
	})
}
