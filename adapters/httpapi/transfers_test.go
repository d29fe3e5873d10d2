package httpapi_test

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"testing"
)

// fundAs credits acct's test wallet ("" the platform's own) with a paid
// Pix charge of amount, made and paid by the platform's key acting for it,
// and returns what the wallet gained.
func (e *payEnv) fundAs(acct string, amount int64) int64 {
	e.t.Helper()
	before := e.available(e.acct.TestKey, acct)
	c := e.as("POST", "/charges", e.acct.TestKey, acct, map[string]any{"amount": amount, "payment_method": "pix"}, "Idempotency-Key", e.key())
	e.want(c, 201, "")
	e.want(e.as("POST", "/test_helpers/charges/"+c.str("id")+"/pay", e.acct.TestKey, acct, map[string]any{}), 200, "")
	return e.available(e.acct.TestKey, acct) - before
}

// available is the BRL available balance key sees (acting for acct when
// set).
func (e *payEnv) available(key, acct string) int64 {
	e.t.Helper()
	r := e.as("GET", "/wallets/balance?currency=BRL", key, acct, nil)
	e.want(r, 200, "")
	return r.num("available")
}

// transfer sends POST /v1/transfers with key (acting for acct when set)
// under a fresh Idempotency-Key.
func (e *payEnv) transfer(key, acct, dest string, amount int64) payResp {
	e.t.Helper()
	return e.as("POST", "/transfers", key, acct, map[string]any{"amount": amount, "destination": dest}, "Idempotency-Key", e.key())
}

// TestTransfers covers POST/GET /v1/transfers on both databases: both
// directions (the platform's key, the sub-account's own key, the
// platform acting for it), the idempotent replay, the balance refusal,
// validation, both sides' reads, list and events, and a clean ledger.
func TestTransfers(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller := e.newSeller("Loja Vendedora")
			platformFunds := e.fundAs("", 20000)
			sellerFunds := e.fundAs(seller, 5000)

			// The platform pays its seller, under an Idempotency-Key.
			body := map[string]any{"amount": 3000, "destination": seller, "description": "repasse de dezembro",
				"metadata": map[string]any{"pedido": "42"}}
			first := e.as("POST", "/transfers", e.acct.TestKey, "", body, "Idempotency-Key", "transfer-key-1")
			e.want(first, 201, "")
			id := first.str("id")
			if first.str("object") != "transfer" || first.num("amount") != 3000 || first.str("currency") != "BRL" ||
				first.str("source_account") != e.acct.AccountID || first.str("destination") != seller || first.str("status") != "paid" ||
				first.Body["source_charge"] != nil || first.str("description") != "repasse de dezembro" || first.str("created_at") == "" {
				t.Fatalf("created: %s", first.Raw)
			}
			if m, _ := first.Body["metadata"].(map[string]any); m["pedido"] != "42" {
				t.Errorf("metadata: %s", first.Raw)
			}
			again := e.as("POST", "/transfers", e.acct.TestKey, "", body, "Idempotency-Key", "transfer-key-1")
			if again.Status != 201 || again.str("id") != id || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay: %d %s", again.Status, again.Raw)
			}
			e.want(e.as("POST", "/transfers", e.acct.TestKey, "", map[string]any{"amount": 3001, "destination": seller},
				"Idempotency-Key", "transfer-key-1"), 409, "idempotency_key_reused")
			if p, s := e.available(e.acct.TestKey, ""), e.available(e.acct.TestKey, seller); p != platformFunds-3000 || s != sellerFunds+3000 {
				t.Fatalf("after one transfer (and its replay): platform %d, seller %d; want %d and %d", p, s, platformFunds-3000, sellerFunds+3000)
			}

			// The seller pays its platform back: with its own key, and
			// through the platform's key acting for it.
			key := sellerKey(t, e, seller)
			back := e.transfer(key, "", e.acct.AccountID, 1000)
			e.want(back, 201, "")
			if back.str("source_account") != seller || back.str("destination") != e.acct.AccountID {
				t.Errorf("seller → platform: %s", back.Raw)
			}
			e.want(e.transfer(e.acct.TestKey, seller, e.acct.AccountID, 500), 201, "")
			if p, s := e.available(e.acct.TestKey, ""), e.available(e.acct.TestKey, seller); p != platformFunds-1500 || s != sellerFunds+1500 {
				t.Fatalf("after the way back: platform %d, seller %d", p, s)
			}

			// Over the available balance: 422, nothing moves.
			over := e.transfer(key, "", e.acct.AccountID, sellerFunds+1501)
			if over.Status != 422 || over.code() != "insufficient_balance" || over.param() != "amount" {
				t.Errorf("over the balance: %d %s", over.Status, over.Raw)
			}
			e.want(e.transfer(e.acct.LiveKey, "", seller, 1), 422, "insufficient_balance") // the live wallet is empty
			if s := e.available(e.acct.TestKey, seller); s != sellerFunds+1500 {
				t.Errorf("a refused transfer moved money: seller %d", s)
			}
			testTransferValidation(t, e, seller)
			testTransferReads(t, e, seller, key, id)
			e.verifyLedger()
			testTransferDrift(t, e, id)
		})
	}
}

// testTransferDrift plants two changes verify must name: a transfer whose
// amount no longer matches its entries, and another whose destination
// entry names a transfer that does not exist.
func testTransferDrift(t *testing.T, e *payEnv, id string) {
	ctx := context.Background()
	raw := strings.TrimPrefix(id, "tr_")
	db := e.srv.App.DB.Bun()
	if _, err := db.ExecContext(ctx, `UPDATE transfers SET amount = amount + 1 WHERE id = ?`, raw); err != nil {
		t.Fatal(err)
	}
	l := e.as("GET", "/transfers?limit=1", e.acct.TestKey, "", nil)
	other := strings.TrimPrefix(l.Body["data"].([]any)[0].(map[string]any)["id"].(string), "tr_")
	if _, err := db.ExecContext(ctx, `UPDATE ledger_entries SET transfer_id = 'gone' WHERE transfer_id = ? AND account_id = ?`,
		other, e.acct.AccountID); err != nil {
		t.Fatal(err)
	}
	problems, err := e.srv.App.Payments.VerifyLedger(ctx)
	if err != nil {
		t.Fatal(err)
	}
	all := strings.Join(problems, "\n")
	for _, want := range []string{"transfer " + id + " ", "transfer tr_" + other + " ", "transfer tr_gone, which does not exist"} {
		if !strings.Contains(all, want) {
			t.Errorf("verify does not name %q:\n%s", want, all)
		}
	}
}

func testTransferValidation(t *testing.T, e *payEnv, seller string) {
	for _, tt := range []struct {
		name        string
		body        any
		status      int
		code, param string
	}{
		{"no amount", map[string]any{"destination": seller}, 400, "parameter_missing", "amount"},
		{"zero amount", map[string]any{"amount": 0, "destination": seller}, 400, "parameter_invalid", "amount"},
		{"negative amount", map[string]any{"amount": -5, "destination": seller}, 400, "parameter_invalid", "amount"},
		{"no destination", map[string]any{"amount": 100}, 400, "parameter_missing", "destination"},
		{"not an account id", map[string]any{"amount": 100, "destination": "ch_x"}, 400, "parameter_invalid", "destination"},
		{"to itself", map[string]any{"amount": 100, "destination": e.acct.AccountID}, 400, "parameter_invalid", "destination"},
		{"bad currency", map[string]any{"amount": 100, "destination": seller, "currency": "R$"}, 400, "parameter_invalid", "currency"},
		{"long description", map[string]any{"amount": 100, "destination": seller, "description": fmt.Sprintf("%141s", "x")}, 400, "parameter_invalid", "description"},
		{"unknown field", map[string]any{"amount": 100, "destination": seller, "source": e.acct.AccountID}, 400, "", ""},
	} {
		r := e.as("POST", "/transfers", e.acct.TestKey, "", tt.body, "Idempotency-Key", e.key())
		if r.Status != tt.status || (tt.code != "" && r.code() != tt.code) || (tt.param != "" && r.param() != tt.param) {
			t.Errorf("%s: %d %s %s, want %d %s %s: %s", tt.name, r.Status, r.code(), r.param(), tt.status, tt.code, tt.param, r.Raw)
		}
	}
	e.want(e.as("POST", "/transfers", e.acct.TestKey, "", map[string]any{"amount": 100, "destination": seller}), 400, "idempotency_key_missing")
}

// testTransferReads: both sides read the transfer and list it with a
// cursor, and each got transfer.created; the live mode sees none.
func testTransferReads(t *testing.T, e *payEnv, seller, sellerKey, id string) {
	for _, who := range []struct{ key, acct string }{{e.acct.TestKey, ""}, {sellerKey, ""}, {e.acct.TestKey, seller}} {
		g := e.as("GET", "/transfers/"+id, who.key, who.acct, nil)
		if g.Status != 200 || g.str("id") != id || g.num("amount") != 3000 {
			t.Errorf("GET as %s/%s: %d %s", who.key[:8], who.acct, g.Status, g.Raw)
		}
	}
	e.want(e.as("GET", "/transfers/"+id, e.acct.LiveKey, "", nil), 404, "resource_not_found")
	e.want(e.as("GET", "/transfers/tr_nope", e.acct.TestKey, "", nil), 404, "resource_not_found")

	// The platform sent one and received two; newest first, a page at a time.
	var ids []string
	cursor := ""
	for range 4 {
		path := "/transfers?limit=2"
		if cursor != "" {
			path += "&starting_after=" + cursor
		}
		p := e.as("GET", path, e.acct.TestKey, "", nil)
		e.want(p, 200, "")
		for _, it := range p.Body["data"].([]any) {
			ids = append(ids, it.(map[string]any)["id"].(string))
		}
		if p.Body["has_more"] != true {
			break
		}
		cursor = p.str("next_cursor")
	}
	if len(ids) != 3 || ids[2] != id {
		t.Errorf("the platform's transfers, newest first: %v (the first, %s, last)", ids, id)
	}
	if l := e.as("GET", "/transfers", sellerKey, "", nil); len(l.Body["data"].([]any)) != 3 {
		t.Errorf("the seller's list: %s", l.Raw)
	}
	if l := e.as("GET", "/transfers", e.acct.LiveKey, "", nil); len(l.Body["data"].([]any)) != 0 {
		t.Errorf("the live list: %s", l.Raw)
	}
	e.want(e.as("GET", "/transfers?starting_after=po_x", e.acct.TestKey, "", nil), 400, "parameter_invalid")
	e.want(e.as("GET", "/transfers?page=2", e.acct.TestKey, "", nil), 400, "parameter_unsupported")

	// Each side got its transfer.created.
	for _, who := range []string{"", seller} {
		l := e.as("GET", "/events?type=transfer.created", e.acct.TestKey, who, nil)
		found := false
		for _, it := range l.Body["data"].([]any) {
			obj := it.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
			if obj["id"] == id && obj["destination"] == seller && obj["amount"] == 3000.0 {
				found = true
			}
		}
		if !found {
			t.Errorf("transfer.created of %s in %q's events: %s", id, who, l.Raw)
		}
	}
}

// TestTransfersConcurrent: 20 transfers at once from a wallet that covers
// 5 move exactly 5; then 20 at once in both directions between the same
// two wallets all commit (no deadlock) and keep the sum; verify clean.
func TestTransfersConcurrent(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller := e.newSeller("Loja Concorrida")
			e.fundAs("", 10000)
			sellerFunds := e.fundAs(seller, 10000)
			// Leave the seller exactly 5 transfers of 1000 and a half.
			e.want(e.transfer(e.acct.TestKey, seller, e.acct.AccountID, sellerFunds-5500), 201, "")

			statuses := e.concurrently(20, func(i int) payResp {
				return e.transfer(e.acct.TestKey, seller, e.acct.AccountID, 1000)
			})
			if statuses[201] != 5 || statuses[422] != 15 {
				t.Fatalf("20 transfers of 1000 from 5500: %v, want 5 × 201 and 15 × 422", statuses)
			}
			if s := e.available(e.acct.TestKey, seller); s != 500 {
				t.Fatalf("the seller has %d left, want 500", s)
			}

			sum := e.available(e.acct.TestKey, "") + e.available(e.acct.TestKey, seller)
			statuses = e.concurrently(20, func(i int) payResp {
				if i%2 == 0 {
					return e.transfer(e.acct.TestKey, "", seller, 100)
				}
				return e.transfer(e.acct.TestKey, seller, e.acct.AccountID, 100)
			})
			if statuses[201] != 20 {
				t.Fatalf("20 transfers both ways: %v, want 20 × 201", statuses)
			}
			if got := e.available(e.acct.TestKey, "") + e.available(e.acct.TestKey, seller); got != sum {
				t.Errorf("the two wallets hold %d, held %d before", got, sum)
			}
			e.verifyLedger()
		})
	}
}

// concurrently runs call n times at once and counts the statuses.
func (e *payEnv) concurrently(n int, call func(i int) payResp) map[int]int {
	var (
		wg       sync.WaitGroup
		mu       sync.Mutex
		statuses = map[int]int{}
	)
	start := make(chan struct{})
	for i := range n {
		wg.Go(func() {
			<-start
			r := call(i)
			mu.Lock()
			statuses[r.Status]++
			mu.Unlock()
			if r.Status != 201 && r.Status != 422 {
				e.t.Errorf("transfer %d: %d %s", i, r.Status, r.Raw)
			}
		})
	}
	close(start)
	wg.Wait()
	return statuses
}
