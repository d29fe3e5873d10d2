package httpapi_test

import (
	"fmt"
	"testing"
)

// TestMarketplaceJourney walks a marketplace as its platform would, over
// HTTP: three sellers, 100 split charges paid, every seventh refunded in
// part, each seller paid out its whole balance. Then every seller's
// transfer.created events match the shares it was credited, what it was
// paid out is its shares less what the refunds took back, the charges'
// splits say so, and the ledger verifies. SQLite (the journey is the same
// on Postgres, which the property tests cover).
func TestMarketplaceJourney(t *testing.T) {
	t.Parallel()
	e := newPayEnv(t, payDialects[0].dsn(t))
	sellers := []string{e.newSeller("Loja A"), e.newSeller("Loja B"), e.newSeller("Loja C")}
	s := splitScene{e: e, a: sellers[0], b: sellers[1]}
	var ids []string
	for i := range 100 {
		amount := int64(1000 + 137*i)
		id := s.charge(amount, sellers[0], int64(100+i), sellers[1], "10", sellers[2], fmt.Sprintf("%d.50", i%20))
		ids = append(ids, id)
		if i%7 == 3 {
			e.want(s.refund(id, amount/3, nil), 201, "")
		}
	}
	e.advanceRefunds()

	credited, reversed, transfers := map[string]int64{}, map[string]int64{}, map[string]int{}
	for _, id := range ids {
		c := e.as("GET", "/charges/"+id, e.acct.TestKey, "", nil)
		splits, _ := c.Body["splits"].([]any)
		for _, raw := range splits {
			sp := raw.(map[string]any)
			acct := sp["account"].(string)
			share := int64(sp["amount"].(float64))
			credited[acct] += share
			reversed[acct] += int64(sp["amount_reversed"].(float64))
			if share > 0 {
				transfers[acct]++
			}
		}
	}
	for _, seller := range sellers {
		var events int
		var sum int64
		for page, after := 0, ""; page < 10; page++ {
			l := e.as("GET", "/events?type=transfer.created&limit=100"+after, e.acct.TestKey, seller, nil)
			e.want(l, 200, "")
			data, _ := l.Body["data"].([]any)
			for _, ev := range data {
				obj := ev.(map[string]any)["data"].(map[string]any)["object"].(map[string]any)
				sum += int64(obj["amount"].(float64))
				events++
			}
			if more, _ := l.Body["has_more"].(bool); !more || len(data) == 0 {
				break
			}
			after = "&starting_after=" + data[len(data)-1].(map[string]any)["id"].(string)
		}
		if events != transfers[seller] || sum != credited[seller] {
			t.Errorf("%s: %d transfer.created events of %d in all, want %d of %d", seller, events, sum, transfers[seller], credited[seller])
		}
		before := s.avail(seller)
		if before != credited[seller]-reversed[seller] {
			t.Errorf("%s holds %d, want its shares %d less what refunds took back %d", seller, before, credited[seller], reversed[seller])
		}
		s.drain(t, seller)
		if got := s.avail(seller); got != 0 {
			t.Errorf("%s holds %d after its payouts", seller, got)
		}
	}
	e.verifyLedger()
}
