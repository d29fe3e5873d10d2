package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// Documents of the sub-accounts the tests create (valid check digits).
const (
	sellerCPF  = "52998224725"
	sellerCNPJ = "11222333000181"
)

// as sends method path with key and, when acct is set, Quita-Account:
// acct; extra headers are added as given.
func (e *payEnv) as(method, path, key, acct string, body any, extra ...string) apiResp {
	e.t.Helper()
	h := testkit.Header{"apikey": key}
	if acct != "" {
		h["Quita-Account"] = acct
	}
	for i := 0; i+1 < len(extra); i += 2 {
		h[extra[i]] = extra[i+1]
	}
	return apiCallHeader(e.t, method, e.srv.BaseURL+path, h, body)
}

// newSeller creates a sub-account of the env's account and returns its id.
func (e *payEnv) newSeller(name string) string {
	e.t.Helper()
	r := e.as("POST", "/subaccounts", e.acct.TestKey, "",
		map[string]any{"name": name, "document": sellerCNPJ, "email": "vendas@example.com", "payout_pix_key": "vendas@example.com"})
	e.want(r, 201, "")
	return r.str("id")
}

// TestSubaccounts covers /v1/subaccounts on both databases: create with
// its validation and Idempotency-Key, the masked document, list with its
// cursor, get, update, disable, and the refusal to nest.
func TestSubaccounts(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			testSubaccountCreate(t, e)
			testSubaccountListGetUpdate(t, e)
		})
	}
}

func testSubaccountCreate(t *testing.T, e *payEnv) {
	valid := func(over map[string]any) map[string]any {
		b := map[string]any{"name": "Pizzaria Bella", "document": "529.982.247-25", "email": "bella@example.com"}
		for k, v := range over {
			b[k] = v
		}
		return b
	}
	for _, tt := range []struct {
		name        string
		body        any
		status      int
		code, param string
	}{
		{"no name", valid(map[string]any{"name": " "}), 400, "parameter_missing", "name"},
		{"no document", valid(map[string]any{"document": ""}), 400, "parameter_missing", "document"},
		{"bad document", valid(map[string]any{"document": "529.982.247-26"}), 400, "parameter_invalid", "document"},
		{"bad email", valid(map[string]any{"email": "bella"}), 400, "parameter_invalid", "email"},
		{"bad pix key", valid(map[string]any{"payout_pix_key": "+5500"}), 400, "parameter_invalid", "payout_pix_key"},
		{"unknown field", valid(map[string]any{"parent": "acct_x"}), 400, "", ""},
		{"wrong type", valid(map[string]any{"name": 12}), 400, "", "name"},
	} {
		r := e.as("POST", "/subaccounts", e.acct.TestKey, "", tt.body)
		if r.Status != tt.status || (tt.code != "" && r.code() != tt.code) || (tt.param != "" && r.param() != tt.param) {
			t.Errorf("%s: %d %s %s, want %d %s %s: %s", tt.name, r.Status, r.code(), r.param(), tt.status, tt.code, tt.param, r.Raw)
		}
		if bytes.Contains(r.Raw, []byte("52998224726")) || bytes.Contains(r.Raw, []byte("529.982.247-26")) {
			t.Errorf("%s: the answer repeats the document: %s", tt.name, r.Raw)
		}
	}

	body := valid(map[string]any{"payout_pix_key": "529.982.247-25"})
	first := e.as("POST", "/subaccounts", e.acct.TestKey, "", body, "Idempotency-Key", "seller-bella-1")
	e.want(first, 201, "")
	id := first.str("id")
	if _, ok := domain.ParseAccountID(id); !ok || first.str("object") != "subaccount" || first.str("status") != "active" {
		t.Fatalf("created: %s", first.Raw)
	}
	if first.str("document") != "***.982.247-**" || first.str("payout_pix_key") != "***.982.247-**" || bytes.Contains(first.Raw, []byte(sellerCPF)) {
		t.Errorf("document and key must be masked: %s", first.Raw)
	}
	// The same key and body replays the answer; another body is 409.
	again := e.as("POST", "/subaccounts", e.acct.TestKey, "", body, "Idempotency-Key", "seller-bella-1")
	if again.Status != 201 || again.str("id") != id || again.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replay: %d %s %s", again.Status, again.Header.Get("Idempotent-Replayed"), again.Raw)
	}
	e.want(e.as("POST", "/subaccounts", e.acct.TestKey, "", valid(nil), "Idempotency-Key", "seller-bella-1"), 409, "idempotency_key_reused")

	// The sub-account is a real account with its own empty wallets.
	a, err := e.srv.App.DB.GetAccount(context.Background(), id)
	if err != nil || a.ParentAccountID != e.acct.AccountID || a.Document != sellerCPF {
		t.Fatalf("stored sub-account: %+v %v", a, err)
	}
	for _, key := range []string{e.acct.TestKey, e.acct.LiveKey} {
		w := e.as("GET", "/wallets/balance?currency=BRL", key, id, nil)
		if w.Status != 200 || w.num("available") != 0 || w.num("pending") != 0 {
			t.Errorf("sub-account wallet: %d %s", w.Status, w.Raw)
		}
	}
	// Acting for the sub-account, the platform cannot create one there.
	e.want(e.as("POST", "/subaccounts", e.acct.TestKey, id, valid(nil)), 422, "subaccount_nested")
}

func testSubaccountListGetUpdate(t *testing.T, e *payEnv) {
	other := e.srv.NewAccount(t, "Outra Plataforma")
	var ids []string
	for i := range 3 {
		ids = append(ids, e.newSeller(fmt.Sprintf("Vendedor %d", i)))
		e.clock.Advance(time.Second)
	}
	p1 := e.as("GET", "/subaccounts?limit=2", e.acct.TestKey, "", nil)
	e.want(p1, 200, "")
	data, _ := p1.Body["data"].([]any)
	if len(data) != 2 || p1.Body["has_more"] != true || data[0].(map[string]any)["id"] != ids[2] || p1.str("next_cursor") != ids[1] {
		t.Fatalf("first page: %s", p1.Raw)
	}
	if bytes.Contains(p1.Raw, []byte(sellerCNPJ)) {
		t.Errorf("a list shows a document in clear: %s", p1.Raw)
	}
	p2 := e.as("GET", "/subaccounts?limit=2&starting_after="+ids[1], e.acct.TestKey, "", nil)
	data2, _ := p2.Body["data"].([]any)
	if len(data2) != 2 || p2.Body["has_more"] != false || data2[0].(map[string]any)["id"] != ids[0] {
		t.Fatalf("second page: %s", p2.Raw)
	}
	e.want(e.as("GET", "/subaccounts?starting_after=ch_nope", e.acct.TestKey, "", nil), 400, "parameter_invalid")
	// Another platform sees none of them, by list, get, update or disable.
	if r := e.as("GET", "/subaccounts", other.TestKey, "", nil); len(r.Body["data"].([]any)) != 0 {
		t.Errorf("another platform's list: %s", r.Raw)
	}
	e.want(e.as("GET", "/subaccounts/"+ids[0], other.TestKey, "", nil), 404, "resource_not_found")
	e.want(e.as("POST", "/subaccounts/"+ids[0], other.TestKey, "", map[string]any{"name": "X"}), 404, "resource_not_found")
	e.want(e.as("POST", "/subaccounts/"+ids[0]+"/disable", other.TestKey, "", nil), 404, "resource_not_found")
	e.want(e.as("GET", "/subaccounts/"+e.acct.AccountID, e.acct.TestKey, "", nil), 404, "resource_not_found")

	g := e.as("GET", "/subaccounts/"+ids[0], e.acct.TestKey, "", nil)
	if g.Status != 200 || g.str("name") != "Vendedor 0" || g.str("document") != "**.222.333/0001-**" || g.str("payout_pix_key") != "v***@example.com" {
		t.Fatalf("get: %s", g.Raw)
	}
	u := e.as("POST", "/subaccounts/"+ids[0], e.acct.TestKey, "", map[string]any{"name": "Vendedor Zero", "payout_pix_key": ""})
	if u.Status != 200 || u.str("name") != "Vendedor Zero" || u.Body["payout_pix_key"] != nil || u.str("email") != "vendas@example.com" {
		t.Fatalf("update: %s", u.Raw)
	}
	e.want(e.as("POST", "/subaccounts/"+ids[0], e.acct.TestKey, "", map[string]any{"email": "nope"}), 400, "parameter_invalid")
	e.want(e.as("POST", "/subaccounts/"+ids[0], e.acct.TestKey, "", map[string]any{"document": sellerCPF}), 400, "")

	dis := e.as("POST", "/subaccounts/"+ids[0]+"/disable", e.acct.TestKey, "", nil)
	if dis.Status != 200 || dis.str("status") != "disabled" || dis.Body["disabled_at"] == nil {
		t.Fatalf("disable: %s", dis.Raw)
	}
	e.want(e.as("POST", "/subaccounts/"+ids[0]+"/disable", e.acct.TestKey, "", nil), 200, "")
	e.want(e.as("POST", "/subaccounts/"+ids[0], e.acct.TestKey, "", map[string]any{"name": "Y"}), 409, "subaccount_disabled")
}

// TestActingForSubaccounts: a platform's key with Quita-Account runs in
// its live sub-account's scope (charges, balance, test helpers) and in no
// other; a sub-account's own key cannot name another account; a disabled
// sub-account's key stops.
func TestActingForSubaccounts(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller := e.newSeller("Loja Vendedora")
			sibling := e.newSeller("Loja Irmã")
			other := e.srv.NewAccount(t, "Outra Plataforma")
			otherSeller := (&payEnv{t: t, srv: e.srv, clock: e.clock, acct: other}).newSeller("Vendedor Alheio")

			// A charge created for the seller is the seller's.
			c := e.as("POST", "/charges", e.acct.TestKey, seller, map[string]any{"amount": 5000, "payment_method": "pix"},
				"Idempotency-Key", e.key())
			e.want(c, 201, "")
			id := c.str("id")
			e.want(e.as("GET", "/charges/"+id, e.acct.TestKey, seller, nil), 200, "")
			e.want(e.as("GET", "/charges/"+id, e.acct.TestKey, "", nil), 404, "resource_not_found")
			e.want(e.as("GET", "/charges/"+id, e.acct.TestKey, sibling, nil), 404, "resource_not_found")
			e.want(e.as("POST", "/test_helpers/charges/"+id+"/pay", e.acct.TestKey, seller, map[string]any{}), 200, "")
			if w := e.as("GET", "/wallets/balance?currency=BRL", e.acct.TestKey, seller, nil); w.num("available") != 4950 {
				t.Errorf("seller's wallet after a 5000 Pix (50 in fees): %s", w.Raw)
			}
			if avail, _ := e.balance("BRL"); avail != 0 {
				t.Errorf("the platform's wallet got %d", avail)
			}
			if l := e.as("GET", "/charges", e.acct.TestKey, "", nil); len(l.Body["data"].([]any)) != 0 {
				t.Errorf("the platform's own list shows the seller's charge: %s", l.Raw)
			}
			// Naming the key's own account changes nothing.
			e.want(e.as("GET", "/charges?limit=1", e.acct.TestKey, e.acct.AccountID, nil), 200, "")

			// Another platform's sub-account and an account that does not
			// exist get the same 404; a malformed id is 400.
			raw, _ := domain.NewRawID(rand.Reader)
			for _, acct := range []string{otherSeller, other.AccountID, domain.PrefixAccount + raw} {
				r := e.as("GET", "/wallets", e.acct.TestKey, acct, nil)
				if r.Status != 404 || r.code() != "account_not_found" || r.param() != "Quita-Account" {
					t.Errorf("%s: %d %s", acct, r.Status, r.Raw)
				}
				if bytes.Contains(r.Raw, []byte(acct)) {
					t.Errorf("the 404 repeats the account: %s", r.Raw)
				}
			}
			e.want(e.as("GET", "/wallets", e.acct.TestKey, "ch_x", nil), 400, "parameter_invalid")

			// A sub-account's own key: its own scope only.
			key := sellerKey(t, e, seller)
			e.want(e.as("GET", "/charges/"+id, key, "", nil), 200, "")
			e.want(e.as("GET", "/charges/"+id, key, seller, nil), 200, "")
			for _, acct := range []string{sibling, e.acct.AccountID, otherSeller} {
				e.want(e.as("GET", "/wallets", key, acct, nil), 403, "account_header_not_allowed")
			}
			e.want(e.as("POST", "/subaccounts", key, "", map[string]any{"name": "N", "document": sellerCPF, "email": "n@example.com"}),
				422, "subaccount_nested")

			// Disabled: the platform can no longer act for it, and its own
			// key stops; its charges stay.
			e.want(e.as("POST", "/subaccounts/"+seller+"/disable", e.acct.TestKey, "", nil), 200, "")
			e.want(e.as("GET", "/charges/"+id, e.acct.TestKey, seller, nil), 403, "subaccount_disabled")
			e.want(e.as("GET", "/charges/"+id, key, "", nil), 401, "api_key_invalid")
			e.want(e.as("GET", "/wallets", e.acct.TestKey, sibling, nil), 200, "")
			e.verifyLedger()
		})
	}
}

// sellerKey gives the sub-account a test key of its own, as a platform
// inviting it would.
func sellerKey(t *testing.T, e *payEnv, acct string) string {
	t.Helper()
	key, err := domain.NewAPIKey(domain.ModeTest, rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	raw, _ := domain.NewRawID(rand.Reader)
	rec := ports.APIKeyRecord{ID: domain.PrefixAPIKey + raw, AccountID: acct, Mode: domain.ModeTest,
		Fingerprint: domain.APIKeyFingerprint(key), Prefix: domain.APIKeyPrefix(key), Label: "seller", CreatedAt: e.clock.Now()}
	if err := e.srv.App.DB.CreateAPIKey(context.Background(), rec); err != nil {
		t.Fatal(err)
	}
	return key
}
