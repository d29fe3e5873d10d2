package bcbpix_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/getkin/kin-openapi/openapi3"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
)

// liveCycles is how many monthly cycles each journey is debited before the
// payer revokes the mandate, with the next one scheduled: half a year
// keeps the test within seconds on both databases.
const liveCycles = 6

// subscriptionJSON is what the flow reads of a subscription object.
type subscriptionJSON struct {
	ID           string `json:"id"`
	Status       string `json:"status"`
	CancelledBy  string `json:"cancelled_by"`
	FirstPayment *struct {
		Charge string `json:"charge"`
	} `json:"first_payment"`
	PayerAccount map[string]string `json:"payer_account"`
	APIPix       struct {
		RecID      string `json:"rec_id"`
		SolicRecID string `json:"solicrec_id"`
	} `json:"api_pix"`
	LatestCycle *struct {
		Cycle         int    `json:"cycle"`
		Status        string `json:"status"`
		NextDebitDate string `json:"next_debit_date"`
		FailureCode   string `json:"failure_code"`
	} `json:"latest_cycle"`
	Cycles struct {
		Open, Paid, Failed int
	} `json:"cycles"`
	Error *struct {
		Code  string `json:"code"`
		Param string `json:"param"`
	} `json:"error"`
}

// A whole live subscription through quitad's HTTP API, as a merchant
// drives it with the live key, against pixsim as the PSP, on one clock
// that quitad, the adapter and pixsim share. For each journey the payer
// authorises at pixsim's payer side and pixsim's webhookrec callback,
// posted over HTTPS with the PSP's certificate to quitad's /rec route,
// activates the subscription; the worker creates each cycle's cobr when
// its window opens; pixsim's payer bank debits it on its due date and the
// webhookcobr callback to /cobr settles the cycle's charge (cycle 3 is
// refused first and paid on its retry, asked of the PSP under the
// policy); the wallet is credited net of fees; then the payer revokes the
// mandate and the subscription is cancelled by the payer. Each change is
// read right after pixsim's step, before any worker pass, so it is the
// callback that applied it. Every Pix Automático request quitad sends
// matches the official API Pix document.
func TestLiveSubscriptionThroughPixsim(t *testing.T) {
	t.Parallel()
	var doc *openapi3.T
	if _, err := readAPIPixDoc(); err == nil {
		doc = loadAPIPixDoc(t)
	}
	for _, b := range backends {
		t.Run(b.name, func(t *testing.T) {
			t.Parallel()
			clock := testkit.NewClock(time.Date(2027, 2, 1, 13, 0, 0, 0, time.UTC))
			spec := &specRequests{doc: doc, checked: map[string]int{}}
			o := worldOptions{clock: clock}
			if doc != nil {
				o.wrap = func(h http.Handler) http.Handler { spec.next = h; return spec }
			}
			w := newWorldWith(t, b.dsn(t), o)
			fees := domain.FeeSchedule{Provider: domain.Fee{BPS: 50}, Platform: domain.Fee{BPS: 49}}
			var credited int64
			for _, j := range []string{"authorization_request", "qr_code", "qr_code_with_first_payment"} {
				credited += liveSubscription(t, w, clock, j) * fees.Apply(4990).Net(4990)
				if j == "qr_code_with_first_payment" {
					credited += fees.Apply(1990).Net(1990)
				}
			}
			code, raw := w.do(t, w.acct.LiveKey, http.MethodGet, "/wallets/balance?currency=BRL", nil, "")
			var bal struct{ Available, Pending int64 }
			if err := json.Unmarshal(raw, &bal); err != nil || code != http.StatusOK || bal.Available+bal.Pending != credited {
				t.Errorf("wallet %d %s, want %d credited net of fees", code, raw, credited)
			}
			problems, err := w.app.Payments.VerifyLedger(context.Background())
			if err != nil || len(problems) > 0 {
				t.Errorf("ledger: %v %v", err, problems)
			}
			w.sim.Idle()
			var recs, cobrs int
			for _, cb := range w.sim.Callbacks() {
				switch {
				case cb.Cause == pixsim.CauseRec && strings.HasSuffix(cb.URL, "/rec"):
					recs++
				case cb.Cause == pixsim.CauseCobR && strings.HasSuffix(cb.URL, "/cobr"):
					cobrs++
				default:
					continue
				}
				if cb.Status != http.StatusOK {
					t.Errorf("callback %s %v answered %d", cb.Cause, cb.IDs, cb.Status)
				}
			}
			if recs < 6 || cobrs < 3*liveCycles {
				t.Errorf("%d rec and %d cobr callbacks reached quitad", recs, cobrs)
			}
			t.Run("requests match the API Pix document", func(t *testing.T) {
				if doc == nil {
					t.Skip("no API Pix document")
				}
				spec.mu.Lock()
				defer spec.mu.Unlock()
				for _, p := range spec.problems {
					t.Error(p)
				}
				for _, op := range []string{"POST /rec", "POST /locrec", "POST /solicrec", "GET /rec/{idRec}", "PUT /cobr/{txid}",
					"GET /cobr/{txid}", "POST /cobr/{txid}/retentativa/{data}", "PUT /webhookrec", "PUT /webhookcobr"} {
					if spec.checked[op] == 0 {
						t.Errorf("no %s was checked (%v)", op, spec.checked)
					}
				}
			})
		})
	}
}

// liveSubscription runs one journey's subscription from its create to the
// payer's revocation and returns how many cycles were paid.
func liveSubscription(t *testing.T, w *world, clock *testkit.Clock, journey string) int64 {
	t.Helper()
	ctx := context.Background()
	start := domain.BrasiliaDate(clock.Now()).AddDays(5)
	body := map[string]any{"customer": map[string]any{"name": "Maria Silva", "document": expectedDoc},
		"amount": 4990, "interval": "monthly", "start_date": start.String(),
		"end_date": domain.CycleDate(start, domain.IntervalMonthly, 12).String(), "contract": "CTR-" + journey,
		"description": "Plano mensal", "retry_policy": "three_in_seven_days", "journey": journey}
	switch journey {
	case "authorization_request":
		if s := w.subscription(t, http.MethodPost, "/subscriptions", body); s.Error == nil || s.Error.Code != "payer_account_required" {
			t.Fatalf("a live authorization_request without payer_account: %+v", s.Error)
		}
		body["payer_account"] = map[string]any{"ispb": "99999997", "branch": "0001", "number": "998877"}
	case "qr_code_with_first_payment":
		body["first_payment"] = map[string]any{"amount": 1990}
	}
	sub := w.subscription(t, http.MethodPost, "/subscriptions", body)
	if sub.Error != nil || sub.Status != "pending_authorization" || len(sub.APIPix.RecID) != 29 {
		t.Fatalf("%s: created %+v", journey, sub)
	}
	rawID := strings.TrimPrefix(sub.ID, domain.PrefixSubscription)
	var err error
	if journey == "authorization_request" {
		if sr, ok := w.sim.SolicRecByID(sub.APIPix.SolicRecID); !ok || sr.Destinatario.Conta != "998877" || sub.PayerAccount["number_last4"] != "8877" {
			t.Fatalf("the solicrec at the PSP %+v; the subscription shows %v", sr, sub.PayerAccount)
		}
		_, err = w.sim.AcceptSolicRec(ctx, pixsim.SolicRecAnswer{IDSolicRec: sub.APIPix.SolicRecID, CodMun: "3550308"})
	} else {
		_, err = w.sim.ApproveRec(ctx, pixsim.RecApproval{IDRec: sub.APIPix.RecID, CodMun: "3550308"})
	}
	if err != nil {
		t.Fatal(err)
	}
	if s := w.subscription(t, http.MethodGet, "/subscriptions/"+sub.ID, nil); s.Status != "active" {
		t.Fatalf("%s: after the payer authorised: %s", journey, s.Status)
	}
	if sub.FirstPayment != nil {
		if c := w.get(t, sub.FirstPayment.Charge); c.Status != "paid" {
			t.Fatalf("the first payment's charge: %s", c.Status)
		}
	}
	for k := 1; k <= liveCycles+1; k++ {
		due := domain.CycleDate(start, domain.IntervalMonthly, k)
		moveTo(clock, domain.WindowOpens(due))
		w.runSubscriptions(t)
		txid := domain.CycleTxID(w.acct.AccountID, domain.ModeLive, rawID, k)
		if c, ok := w.sim.CobRByTxID(txid); !ok || c.Status != pixsim.CobRAtiva || c.Calendario.DataDeVencimento != due.String() {
			t.Fatalf("%s cycle %d: the cobr at the PSP %+v", journey, k, c)
		}
		if k > liveCycles {
			break // scheduled, for the revocation to cancel
		}
		moveTo(clock, domain.FirstDebitDate(due))
		if k == 3 {
			if _, err := w.sim.FailCobR(ctx, pixsim.CobRAction{TxID: txid, Codigo: "AM02"}); err != nil {
				t.Fatal(err)
			}
			s := w.subscription(t, http.MethodGet, "/subscriptions/"+sub.ID, nil)
			if l := s.LatestCycle; l == nil || l.Cycle != 3 || l.Status != "retrying" || l.FailureCode != "AM02" || l.NextDebitDate == "" {
				t.Fatalf("%s: after the refused debit: %+v", journey, l)
			}
			retry, err := bizdays.ParseDate(s.LatestCycle.NextDebitDate)
			if err != nil {
				t.Fatal(err)
			}
			moveTo(clock, retry)
		}
		if _, err := w.sim.DebitCobR(ctx, pixsim.CobRAction{TxID: txid}); err != nil {
			t.Fatalf("%s cycle %d: %v", journey, k, err)
		}
		s := w.subscription(t, http.MethodGet, "/subscriptions/"+sub.ID, nil)
		if s.Cycles.Paid != k || s.LatestCycle == nil || s.LatestCycle.Cycle != k || s.LatestCycle.Status != "paid" {
			t.Fatalf("%s: after cycle %d's debit: %+v, latest %+v", journey, k, s.Cycles, s.LatestCycle)
		}
	}
	if _, err := w.sim.CancelRecByPayer(ctx, pixsim.RecAction{IDRec: sub.APIPix.RecID}); err != nil {
		t.Fatal(err)
	}
	s := w.subscription(t, http.MethodGet, "/subscriptions/"+sub.ID, nil)
	if s.Status != "cancelled" || s.CancelledBy != "payer" || s.Cycles.Paid != liveCycles || s.Cycles.Open != 0 {
		t.Fatalf("%s: after the payer revoked: %s by %s, cycles %+v", journey, s.Status, s.CancelledBy, s.Cycles)
	}
	w.runSubscriptions(t) // nothing is left to schedule
	if c, ok := w.sim.CobRByTxID(domain.CycleTxID(w.acct.AccountID, domain.ModeLive, rawID, liveCycles+2)); ok {
		t.Fatalf("%s: a cycle after the revocation: %+v", journey, c)
	}
	return liveCycles
}

// moveTo moves clock to 10:00 in Brasília of day d, if that is ahead.
func moveTo(clock *testkit.Clock, d bizdays.Date) {
	if at := domain.EndOfBrasiliaDay(d.AddDays(-1)).Add(10 * time.Hour); at.After(clock.Now()) {
		clock.Advance(at.Sub(clock.Now()))
	}
}

// runSubscriptions runs the subscription worker's tick twice (a cycle
// scheduled, then what follows it).
func (w *world) runSubscriptions(t *testing.T) {
	t.Helper()
	for range 2 {
		if _, err := w.app.Subscriptions.RunSubscriptions(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
}

// subscription sends a subscription request with the live key (a POST
// with a fresh Idempotency-Key) and decodes the answer.
func (w *world) subscription(t *testing.T, method, path string, body any) subscriptionJSON {
	t.Helper()
	idem := ""
	if method == http.MethodPost {
		idem = newIdem()
	}
	code, raw := w.do(t, w.acct.LiveKey, method, path, body, idem)
	var s subscriptionJSON
	if err := json.Unmarshal(raw, &s); err != nil || (code >= 300) != (s.Error != nil) {
		t.Fatalf("%s %s: %d %s", method, path, code, raw)
	}
	return s
}
