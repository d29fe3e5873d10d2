package store_test

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// A due-date charge's revised terms are stored by UpdateCharge on both
// dialects: charges.due_terms and expires_at (the column the expiry
// worker reads) move together, and a revision is never written over a
// payment that committed first, however the two interleave.
func TestRevisedDueTermsAreStored(t *testing.T) {
	t.Parallel()
	for _, d := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			db := openStore(t, d.dsn(t))
			t.Run("terms and expiry", func(t *testing.T) { testRevisedTermsRoundTrip(t, db) })
			t.Run("never over a payment", func(t *testing.T) { testRevisionNeverOverwritesAPayment(t, db) })
		})
	}
}

// dueChargeFor is a R$ 19.90 due-date charge of liveA created at
// baseTime, due in ten days, payable 5 more, with a R$ 1.00 fine.
func dueChargeFor(t *testing.T, db *store.DB) *domain.Charge {
	t.Helper()
	created := domain.BrasiliaDate(baseTime)
	days := 5
	c := newCharge(t, liveA, baseTime, func(p *domain.NewChargeParams) {
		p.Customer = domain.Customer{Name: "Ana", Document: "529.982.247-25"}
		p.Due = &domain.DueTermsParams{Due: created.AddDays(10), DaysAfterDue: &days,
			Fine: &domain.Fine{Type: domain.FineFixed, Amount: 100}}
	})
	attachPix(t, c, baseTime)
	mustCreate(t, db, c, nil, nil)
	return c
}

func reviseFn(rev domain.DueRevision, at time.Time) ports.ChargeChangeFunc {
	return func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
		_, err := c.ReviseDueTerms(rev, at)
		return ports.ChargeChange{}, err
	}
}

func testRevisedTermsRoundTrip(t *testing.T, db *store.DB) {
	ctx := t.Context()
	c := dueChargeFor(t, db)
	oldExpiry := c.ExpiresAt()
	later := domain.BrasiliaDate(baseTime).AddDays(30)
	rev := domain.DueRevision{Due: &later, Interest: domain.ReplaceRule(domain.Interest{Type: domain.InterestPercentPerMonth, Rate: "1.00"}),
		Fine: domain.RemoveRule[domain.Fine]()}
	at := baseTime.Add(time.Hour)
	var want domain.ChargeSnapshot
	err := db.UpdateCharge(ctx, liveA, c.ID(), func(ctx context.Context, c *domain.Charge, tx ports.ChargeTx) (ports.ChargeChange, error) {
		ch, err := reviseFn(rev, at)(ctx, c, tx)
		want = c.Snapshot()
		return ch, err
	})
	if err != nil {
		t.Fatalf("UpdateCharge: %v", err)
	}
	got := mustGet(t, db, liveA, c.ID())
	assertSnapshot(t, got, want)
	terms, _ := got.DueTerms()
	if p := terms.Params(); p.Due != later || p.Fine != nil || p.Interest == nil || !got.ExpiresAt().After(oldExpiry) ||
		!got.Pix().ExpiresAt.Equal(got.ExpiresAt()) {
		t.Fatalf("stored terms %+v expiring %v, want the revision and a later expiry than %v", p, got.ExpiresAt(), oldExpiry)
	}
	// The expiry column moved: between the old and the new expiry the
	// charge is not due for expiry.
	refs, err := db.ListOpenExpired(ctx, oldExpiry.Add(time.Hour), 100)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range refs {
		if r.ID == c.ID() {
			t.Errorf("the revised charge is listed for expiry at its old expires_at")
		}
	}
	if refs, _ := db.ListOpenExpired(ctx, got.ExpiresAt(), 100); !containsRef(refs, c.ID()) {
		t.Errorf("the revised charge is not listed for expiry at its new expires_at")
	}
}

func containsRef(refs []ports.ChargeRef, id string) bool {
	for _, r := range refs {
		if r.ID == id {
			return true
		}
	}
	return false
}

func testRevisionNeverOverwritesAPayment(t *testing.T, db *store.DB) {
	ctx := t.Context()
	fees := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}}
	for i := range 8 {
		c := dueChargeFor(t, db)
		pay := domain.PixPayment{EndToEndID: "E00000000202603011300revise" + string(rune('a'+i)) + "0000",
			Amount: 1990, PaidAt: baseTime.Add(time.Minute)}
		rev := domain.DueRevision{Fine: domain.ReplaceRule(domain.Fine{Type: domain.FineFixed, Amount: 300})}
		var (
			wg       sync.WaitGroup
			revErr   error
			settleEr error
		)
		wg.Add(2)
		go func() {
			defer wg.Done()
			revErr = db.UpdateCharge(ctx, liveA, c.ID(), reviseFn(rev, baseTime.Add(time.Minute)))
		}()
		go func() {
			defer wg.Done()
			settleEr = db.UpdateCharge(ctx, liveA, c.ID(), func(_ context.Context, c *domain.Charge, _ ports.ChargeTx) (ports.ChargeChange, error) {
				out, err := c.SettlePix(pay, fees)
				if err == nil && out != domain.OutcomePaid {
					err = errors.New("not paid: " + string(out))
				}
				return ports.ChargeChange{}, err
			})
		}()
		wg.Wait()
		if settleEr != nil {
			t.Fatalf("settle: %v", settleEr)
		}
		got := mustGet(t, db, liveA, c.ID())
		if got.Status() != domain.TxPaid || got.Settlement() == nil || got.Settlement().EndToEndID != pay.EndToEndID {
			t.Fatalf("round %d: status %s settlement %+v; the payment was overwritten", i, got.Status(), got.Settlement())
		}
		terms, _ := got.DueTerms()
		switch fine := terms.Params().Fine.Amount; {
		case revErr == nil && fine != 300:
			t.Errorf("round %d: the revision committed but the fine is %d", i, fine)
		case revErr != nil && (!errors.Is(revErr, domain.ErrChargeNotRevisable) || fine != 100):
			t.Errorf("round %d: revision %v with fine %d, want ErrChargeNotRevisable and the fine as it was", i, revErr, fine)
		}
	}
}
