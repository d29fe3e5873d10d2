package httpapi_test

import (
	"bytes"
	"context"
	"crypto/rand"
	"testing"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// TestTransferIsolation: a transfer only ever goes between a platform and
// a live sub-account of its own. Another platform's sub-account, another
// platform, a sibling (by the sub-account's key or by the platform acting
// for it) and an account that does not exist all get the same 404
// account_not_found; a disabled sub-account is 409 subaccount_disabled;
// no refusal moves money, and neither a sibling nor another platform can
// read the transfers.
func TestTransferIsolation(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller := e.newSeller("Loja Vendedora")
			sibling := e.newSeller("Loja Irmã")
			other := e.srv.NewAccount(t, "Outra Plataforma")
			otherEnv := &payEnv{t: t, srv: e.srv, clock: e.clock, acct: other}
			otherSeller := otherEnv.newSeller("Vendedor Alheio")
			e.fundAs("", 10000)
			e.fundAs(seller, 10000)
			otherEnv.fundAs("", 10000)
			key := sellerKey(t, e, seller)
			raw, _ := domain.NewRawID(rand.Reader)
			nobody := domain.PrefixAccount + raw

			tr := e.transfer(e.acct.TestKey, "", seller, 1000)
			e.want(tr, 201, "")
			id := tr.str("id")
			wallets := e.walletsOf(seller, sibling)

			for _, tt := range []struct {
				name      string
				key, acct string
				dest      string
			}{
				{"platform → another platform's seller", e.acct.TestKey, "", otherSeller},
				{"platform → another platform", e.acct.TestKey, "", other.AccountID},
				{"platform → nobody", e.acct.TestKey, "", nobody},
				{"another platform → our seller", other.TestKey, "", seller},
				{"seller's key → sibling", key, "", sibling},
				{"seller's key → another platform", key, "", other.AccountID},
				{"seller's key → another platform's seller", key, "", otherSeller},
				{"seller's key → nobody", key, "", nobody},
				{"platform acting for seller → sibling", e.acct.TestKey, seller, sibling},
				{"platform acting for seller → another platform", e.acct.TestKey, seller, other.AccountID},
			} {
				r := e.transfer(tt.key, tt.acct, tt.dest, 100)
				if r.Status != 404 || r.code() != "account_not_found" || r.param() != "destination" {
					t.Errorf("%s: %d %s", tt.name, r.Status, r.Raw)
				}
				if bytes.Contains(r.Raw, []byte(tt.dest)) {
					t.Errorf("%s: the 404 repeats the account: %s", tt.name, r.Raw)
				}
			}
			// A seller's key cannot even name its sibling as the source.
			e.want(e.transfer(key, sibling, e.acct.AccountID, 100), 403, "account_header_not_allowed")

			// Reads: the sibling and the other platform see nothing.
			e.want(e.as("GET", "/transfers/"+id, e.acct.TestKey, sibling, nil), 404, "resource_not_found")
			e.want(e.as("GET", "/transfers/"+id, other.TestKey, "", nil), 404, "resource_not_found")
			if l := e.as("GET", "/transfers", e.acct.TestKey, sibling, nil); len(l.Body["data"].([]any)) != 0 {
				t.Errorf("the sibling's list: %s", l.Raw)
			}
			if l := e.as("GET", "/transfers", other.TestKey, "", nil); len(l.Body["data"].([]any)) != 0 {
				t.Errorf("another platform's list: %s", l.Raw)
			}
			if l := e.as("GET", "/events?type=transfer.created", e.acct.TestKey, sibling, nil); len(l.Body["data"].([]any)) != 0 {
				t.Errorf("the sibling got transfer.created: %s", l.Raw)
			}
			e.want(e.as("GET", "/transfers?starting_after="+id, e.acct.TestKey, sibling, nil), 400, "parameter_invalid")

			// Disabled: 409 for the platform; its wallet stays.
			e.want(e.as("POST", "/subaccounts/"+sibling+"/disable", e.acct.TestKey, "", nil), 200, "")
			dis := e.transfer(e.acct.TestKey, "", sibling, 100)
			if dis.Status != 409 || dis.code() != "subaccount_disabled" || dis.param() != "destination" {
				t.Errorf("to a disabled seller: %d %s", dis.Status, dis.Raw)
			}
			if got := e.walletsOf(seller, sibling); got != wallets {
				t.Errorf("a refused transfer moved money: %v, then %v", wallets, got)
			}
			e.verifyLedger()
		})
	}
}

// walletsOf is the test available balance of the platform and of each
// account named, read from the store (a disabled sub-account's too).
func (e *payEnv) walletsOf(accts ...string) [4]int64 {
	e.t.Helper()
	var out [4]int64
	for i, a := range append([]string{e.acct.AccountID}, accts...) {
		ws, err := e.srv.App.DB.Wallets(context.Background(), ports.Scope{AccountID: a, Mode: domain.ModeTest})
		if err != nil {
			e.t.Fatal(err)
		}
		for _, w := range ws {
			out[i] += w.Available
		}
	}
	return out
}
