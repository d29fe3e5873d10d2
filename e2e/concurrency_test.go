package e2e_test

import (
	"net/http"
	"sync"
	"testing"
)

// Concurrent payments of one charge: one settles it, the others are 409,
// and the charge keeps the first payment's end-to-end id.
func TestConcurrentPayments(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Corrida")
		c := a.test.mustCreate(t, pixBody(990))
		const n = 10
		var (
			wg    sync.WaitGroup
			start = make(chan struct{})
			rs    = make([]*response, n)
			errs  = make([]error, n)
		)
		for i := range n {
			wg.Go(func() {
				<-start
				rs[i], errs[i] = a.test.send(http.MethodPost, "/test_helpers/charges/"+c.ID+"/pay", nil, nil)
			})
		}
		close(start)
		wg.Wait()
		var winner string
		for i, r := range rs {
			if errs[i] != nil {
				t.Fatal(errs[i])
			}
			switch r.Status {
			case http.StatusOK:
				p := r.charge(t)
				if p.Status != "paid" || winner != "" {
					t.Errorf("second successful payment (status %q, earlier e2e %q)", p.Status, winner)
				}
				winner = p.Settlement["end_to_end_id"]
			case http.StatusConflict:
				r.apiErr(t, http.StatusConflict, "charge_not_pending", "")
			default:
				t.Errorf("pay answered %d %s", r.Status, r.Body)
			}
		}
		if winner == "" {
			t.Fatal("no payment settled the charge")
		}
		g := a.test.get(t, c.ID).want(t, http.StatusOK).charge(t)
		if g.Status != "paid" || g.Settlement["end_to_end_id"] != winner {
			t.Errorf("charge %q settlement %v, want paid by %s", g.Status, g.Settlement, winner)
		}
	})
}
