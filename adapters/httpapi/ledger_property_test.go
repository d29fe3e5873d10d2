package httpapi_test

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"os"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
)

// propertySteps is how many random operations each dialect runs.
const propertySteps = 120

// TestLedgerPropertyRandomMoneyMoves drives random money operations over
// one account through the HTTP API — Pix and card payments, Pix held for
// review then settled or closed, refunds that complete or fail, disputes and
// chargebacks, MED returns, payouts paid, failed or cancelled, time passing
// with releases and automatic returns — and keeps a model of what each one
// moves. After every step the ledger verifies, the wallet the API reports
// (available, pending, its next release, and the debt) is the model's to
// the centavo, the payment touched reads the status the model expects, and
// nothing answers 5xx. Refusals are predicted too: an operation the model
// says the wallet or the payment cannot take must be refused, and one it
// says they can take must succeed. The seed is logged; QUITA_PROPERTY_SEED
// replays it.
func TestLedgerPropertyRandomMoneyMoves(t *testing.T) {
	t.Parallel()
	seed := propertySeed(t)
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			t.Logf("seed %d (replay: QUITA_PROPERTY_SEED=%d)", seed, seed)
			p := newMoneyProperty(t, d.dsn(t), seed)
			outcomes := map[string]int{}
			for i := range propertySteps {
				op := p.pick()
				p.touched, p.answered = nil, 0
				owed := p.wallet.owed
				op.run()
				t.Logf("step %d: %s", i, p.did)
				outcomes[fmt.Sprintf("%s %d", op.name, p.answered)]++
				p.check()
				switch {
				case p.wallet.owed > owed:
					outcomes["debt grew"]++
				case p.wallet.owed < owed:
					outcomes["debt repaid"]++
				}
			}
			t.Logf("outcomes: %v", outcomes)
		})
	}
}

// propertySeed is QUITA_PROPERTY_SEED when it is set, else a fresh seed.
func propertySeed(t *testing.T) uint64 {
	s := os.Getenv("QUITA_PROPERTY_SEED")
	if s == "" {
		return uint64(time.Now().UnixNano())
	}
	seed, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		t.Fatalf("QUITA_PROPERTY_SEED=%q: %v", s, err)
	}
	return seed
}

// feePart is bps plus fixed centavos, rounded half up.
type feePart struct{ bps, fixed int64 }

func (f feePart) of(amount int64) int64 { return (amount*f.bps+5_000)/10_000 + f.fixed }

// netOf is amount less its provider and platform fees; the platform fee
// gives way first, so the net is never negative.
func netOf(amount int64, provider, platform feePart) int64 {
	p := min(provider.of(amount), amount)
	pl := min(platform.of(amount), amount-p)
	return amount - p - pl
}

// The fees the test server applies (docs/payments-and-ledger.md, "Fees"),
// and the payout fee this test sets on its account.
var (
	pixNet        = func(a int64) int64 { return netOf(a, feePart{bps: 50}, feePart{bps: 49}) }
	cardNet       = func(a int64) int64 { return netOf(a, feePart{bps: 299}, feePart{bps: 349, fixed: 39}) }
	payoutFee     = func(a int64) int64 { return feePart{bps: 12}.of(a) + feePart{fixed: 75}.of(a) }
	payoutFeeRule = domain.FeeSchedule{Provider: domain.Fee{BPS: 12}, Platform: domain.Fee{Fixed: 75}}
)

// cardHolding is how long card money stays pending.
const cardHolding = 30 * 24 * time.Hour

// modelHold is pending money, due when the test has moved the clock by
// release, from the seq-th payment credited. One payment's holds share its
// release time; payments credited at one offset are due in seq order, as
// their wall-clock release times are.
type modelHold struct {
	release time.Duration
	seq     int
	amount  int64
}

func compareHolds(a, b modelHold) int {
	return cmp.Or(cmp.Compare(a.release, b.release), cmp.Compare(a.seq, b.seq))
}

// modelWallet is what the account's BRL wallet must hold.
type modelWallet struct {
	available int64
	owed      int64
	holds     []modelHold // ordered by compareHolds, one per payment
}

func (w *modelWallet) pending() int64 {
	var n int64
	for _, h := range w.holds {
		n += h.amount
	}
	return n
}

func (w *modelWallet) hold(h modelHold) {
	if h.amount == 0 {
		return
	}
	i, found := slices.BinarySearchFunc(w.holds, h, compareHolds)
	if found {
		w.holds[i].amount += h.amount
		return
	}
	w.holds = slices.Insert(w.holds, i, h)
}

// credit adds a payment's net: it pays the debt first, and the rest is
// available, or pending under hold when the method has a holding period.
func (w *modelWallet) credit(net int64, hold *modelHold) {
	repay := min(net, w.owed)
	w.owed -= repay
	if hold == nil {
		w.available += net - repay
		return
	}
	hold.amount = net - repay
	w.hold(*hold)
}

// takePending takes amount from the holds due last, as a debit of pending
// does, and returns what it took from each.
func (w *modelWallet) takePending(amount int64) []modelHold {
	var took []modelHold
	for amount > 0 {
		last := &w.holds[len(w.holds)-1]
		n := min(amount, last.amount)
		took = append(took, modelHold{release: last.release, seq: last.seq, amount: n})
		last.amount -= n
		amount -= n
		if last.amount == 0 {
			w.holds = w.holds[:len(w.holds)-1]
		}
	}
	return took
}

// debit takes amount from available first, then pending; false, taking
// nothing, when the two less the debt cannot cover it.
func (w *modelWallet) debit(amount int64) (fromAvailable int64, takes []modelHold, ok bool) {
	if amount > w.available+w.pending()-w.owed {
		return 0, nil, false
	}
	fromAvailable = min(amount, w.available)
	w.available -= fromAvailable
	return fromAvailable, w.takePending(amount - fromAvailable), true
}

// dispute takes amount from available, then pending, and owes the rest.
func (w *modelWallet) dispute(amount int64) {
	fromAvailable := min(amount, w.available)
	fromPending := min(amount-fromAvailable, w.pending())
	w.available -= fromAvailable
	w.takePending(fromPending)
	w.owed += amount - fromAvailable - fromPending
}

// giveBack returns a failed refund's debit exactly as it was taken.
func (w *modelWallet) giveBack(fromAvailable int64, takes []modelHold) {
	w.available += fromAvailable
	for _, h := range takes {
		w.hold(h)
	}
}

// release makes the holds due at now available.
func (w *modelWallet) release(now time.Duration) {
	kept := w.holds[:0]
	for _, h := range w.holds {
		if h.release <= now {
			w.available += h.amount
			continue
		}
		kept = append(kept, h)
	}
	w.holds = kept
}

type chargeKind string

const (
	pixCharge  chargeKind = "pix"
	cardCharge chargeKind = "card"
	// heldCharge is a Pix under a payer lock paid by an undisclosed payer:
	// held for review (PROCESSING) until it is settled or closed.
	heldCharge chargeKind = "held"
)

// modelCharge is one payment as the model sees it.
type modelCharge struct {
	id       string // tx_…
	kind     chargeKind
	amount   int64
	status   string // transaction status
	credited bool
	reserved int64 // refunds not failed
	refunded int64 // refunds confirmed
	disputed int64 // MED returns
	// returnOwed: the charge was closed while its payer's money was held,
	// and that money has not been seen back at the payer's bank yet.
	returnOwed bool
}

func (c *modelCharge) chargeID() string {
	return domain.PrefixCharge + strings.TrimPrefix(c.id, domain.PrefixTransaction)
}

func (c *modelCharge) settledStatus() string {
	if c.kind == cardCharge {
		return string(domain.TxApproved)
	}
	return string(domain.TxPaid)
}

// modelRefund is a refund and the debit it made.
type modelRefund struct {
	id            string
	charge        *modelCharge
	amount        int64
	status        string
	fromAvailable int64
	takes         []modelHold
}

func (r *modelRefund) open() bool { return r.status == "PENDING" || r.status == "IN_PROGRESS" }

// modelPayout is a payout and what it holds (amount plus fee).
type modelPayout struct {
	id     string
	held   int64
	status string
}

// moneyProperty is one run: the server, the random source, the model and
// what the step did (for the log).
type moneyProperty struct {
	t   *testing.T
	e   *payEnv
	ctx context.Context
	rnd *rand.Rand

	now     time.Duration // how far the clock was moved
	wallet  modelWallet
	seq     int // payments credited
	charges []*modelCharge
	refunds []*modelRefund
	payouts []*modelPayout

	touched  *modelCharge // the payment the step changed
	did      string
	answered int // the status of the step's last predicted answer
}

func newMoneyProperty(t *testing.T, dsn string, seed uint64) *moneyProperty {
	p := &moneyProperty{t: t, e: newPayEnv(t, dsn), ctx: context.Background(), rnd: rand.New(rand.NewPCG(seed, 11))}
	if err := p.e.srv.App.Payments.SetAccountFee(p.ctx, p.e.acct.AccountID, domain.FeeKeyPixOut, payoutFeeRule); err != nil {
		t.Fatal(err)
	}
	return p
}

// moneyOp is an operation the step may choose when it applies.
type moneyOp struct {
	name    string
	weight  int
	applies bool
	run     func()
}

func (p *moneyProperty) pick() moneyOp {
	has := func(ok func(*modelCharge) bool) bool { return slices.ContainsFunc(p.charges, ok) }
	ops := []moneyOp{
		{"pay Pix", 4, true, p.payPix},
		{"pay card", 2, true, p.payCard},
		{"hold Pix", 2, true, p.holdForReview},
		{"settle held", 2, has(isHeld), p.settleHeld},
		{"close held", 2, has(isHeld), p.closeHeld},
		{"refund", 5, len(p.charges) > 0, p.refund},
		{"fail refund", 2, len(p.refunds) > 0, p.failRefund},
		{"complete refunds", 2, slices.ContainsFunc(p.refunds, (*modelRefund).open), p.completeRefunds},
		{"dispute status", 2, has(func(c *modelCharge) bool { return c.credited }), p.disputeStatus},
		{"MED return", 4, has(func(c *modelCharge) bool { return c.kind != cardCharge }), p.medReturn},
		{"create payout", 5, true, p.createPayout},
		{"settle payout", 3, len(p.payouts) > 0, p.settlePayout},
		{"pass time", 3, true, p.passTime},
	}
	total := 0
	for _, op := range ops {
		if op.applies {
			total += op.weight
		}
	}
	n := p.rnd.IntN(total)
	for _, op := range ops {
		if !op.applies {
			continue
		}
		if n < op.weight {
			return op
		}
		n -= op.weight
	}
	panic("unreachable")
}

// call sends a request on the account's test key; a 5xx fails the test.
func (p *moneyProperty) call(method, path string, body any) payResp {
	p.t.Helper()
	r := p.e.call(method, path, p.e.acct.TestKey, body)
	if r.Status >= 500 {
		p.t.Fatalf("%s %s: %d %s", method, path, r.Status, r.Raw)
	}
	return r
}

// expect fails the test unless r is the answer the model predicts: status
// and, when code is set, the error code.
func (p *moneyProperty) expect(what string, r payResp, status int, code string) {
	p.t.Helper()
	p.answered = r.Status
	if r.Status != status || (code != "" && r.code() != code) {
		p.t.Fatalf("%s: got %d %s, the model expects %d %s: %s", what, r.Status, r.code(), status, code, r.Raw)
	}
}

// amount is a payment amount: mostly ordinary, sometimes small enough
// that rounding and the fixed card fee decide the net, sometimes large
// enough that its MED return outgrows the wallet.
func (p *moneyProperty) amount() int64 {
	switch p.rnd.IntN(6) {
	case 0:
		return 1 + p.rnd.Int64N(150)
	case 1:
		return 100_000 + p.rnd.Int64N(500_000)
	}
	return 100 + p.rnd.Int64N(60_000)
}

func (p *moneyProperty) choose(cs []*modelCharge, ok func(*modelCharge) bool) *modelCharge {
	var in []*modelCharge
	for _, c := range cs {
		if ok(c) {
			in = append(in, c)
		}
	}
	if len(in) == 0 {
		return nil
	}
	return in[p.rnd.IntN(len(in))]
}

// chooseMostly picks a charge that passes ok four times in five, when
// there is one, and otherwise any charge that passes some.
func (p *moneyProperty) chooseMostly(ok, some func(*modelCharge) bool) *modelCharge {
	if p.rnd.IntN(5) > 0 {
		if c := p.choose(p.charges, ok); c != nil {
			return c
		}
	}
	return p.choose(p.charges, some)
}

func (p *moneyProperty) transition(c *modelCharge, to, paidWith string) payResp {
	body := map[string]any{"status": to}
	if paidWith != "" {
		body["paidWith"] = paidWith
	}
	return p.call("POST", "/test_helpers/payments/"+c.id+"/transition", body)
}

func (p *moneyProperty) payPix() {
	amount := p.amount()
	c := &modelCharge{id: p.e.create(amount, "BRL", "PIX"), kind: pixCharge, amount: amount}
	r := p.call("POST", "/test_helpers/charges/"+c.id+"/pay", map[string]any{})
	p.expect("pay Pix", r, 200, "")
	if r.str("status") != "paid" {
		p.t.Fatalf("pay Pix %s: %s", c.id, r.Raw)
	}
	c.status, c.credited = string(domain.TxPaid), true
	p.seq++
	p.wallet.credit(pixNet(amount), nil)
	p.charges = append(p.charges, c)
	p.touched, p.did = c, fmt.Sprintf("Pix %s of %d paid (net %d)", c.id, amount, pixNet(amount))
}

func (p *moneyProperty) payCard() {
	amount := p.amount()
	c := &modelCharge{id: p.e.create(amount, "BRL", "CREDIT_CARD"), kind: cardCharge, amount: amount}
	r := p.transition(c, "APPROVED", "CREDIT_CARD")
	p.expect("approve card", r, 200, "")
	if r.num("netAmount") != cardNet(amount) {
		p.t.Fatalf("card %s of %d: netAmount %d, want %d", c.id, amount, r.num("netAmount"), cardNet(amount))
	}
	c.status, c.credited = string(domain.TxApproved), true
	p.seq++
	p.wallet.credit(cardNet(amount), &modelHold{release: p.now + cardHolding, seq: p.seq})
	p.charges = append(p.charges, c)
	p.touched, p.did = c, fmt.Sprintf("card %s of %d approved (net %d, held)", c.id, amount, cardNet(amount))
}

// holdForReview creates a Pix locked to a payer and has a payer who does
// not disclose their document pay it: the money is held, not credited.
func (p *moneyProperty) holdForReview() {
	amount := p.amount()
	r := p.postKeyed("/charges", map[string]any{"amount": amount, "payment_method": "pix",
		"customer": map[string]any{"name": "Joao Souza"}, "expected_payer_tax_id": "52998224725"})
	p.expect("create locked charge", r, 201, "")
	raw := strings.TrimPrefix(r.str("id"), domain.PrefixCharge)
	c := &modelCharge{id: domain.PrefixTransaction + raw, kind: heldCharge, amount: amount}
	pay := p.call("POST", "/test_helpers/charges/"+c.chargeID()+"/pay", map[string]any{})
	p.expect("pay locked charge", pay, 200, "")
	if pay.str("status") != "processing" {
		p.t.Fatalf("locked charge %s paid by an undisclosed payer: %s", c.id, pay.Raw)
	}
	c.status = string(domain.TxProcessing)
	p.charges = append(p.charges, c)
	p.touched, p.did = c, fmt.Sprintf("locked Pix %s of %d held for review", c.id, amount)
}

func (p *moneyProperty) postKeyed(path string, body any) payResp {
	p.t.Helper()
	r := p.e.postKeyed(path, p.e.key(), body)
	if r.Status >= 500 {
		p.t.Fatalf("POST %s: %d %s", path, r.Status, r.Raw)
	}
	return r
}

func isHeld(c *modelCharge) bool { return c.kind == heldCharge }
func isProcessing(c *modelCharge) bool {
	return c.kind == heldCharge && c.status == string(domain.TxProcessing)
}

// settleHeld settles a held Pix for the merchant: it is credited from the
// payer funds it was held in.
func (p *moneyProperty) settleHeld() {
	c := p.chooseMostly(isProcessing, isHeld)
	r := p.transition(c, "PAID", "PIX")
	p.touched = c
	what := fmt.Sprintf("settle %s held charge %s", c.status, c.id)
	p.did = what
	switch {
	case slices.Contains(disputeTransitions[c.status], "PAID"):
		// A dispute settled: the status moves, the money does not.
		p.expect(what, r, 200, "")
		c.status = string(domain.TxPaid)
		return
	case c.status != string(domain.TxProcessing):
		p.expect(what, r, 409, "invalid_transition")
		return
	}
	p.expect(what, r, 200, "")
	c.status, c.credited = string(domain.TxPaid), true
	p.seq++
	p.wallet.credit(pixNet(c.amount), nil)
	p.did = fmt.Sprintf("held %s settled PAID (net %d)", c.id, pixNet(c.amount))
}

// closeHeld closes a held Pix — the cancel endpoint, or the transition
// helper to CANCELLED or REFUSED: the payer's money must go back to them,
// and the merchant's wallet does not move.
func (p *moneyProperty) closeHeld() {
	c := p.chooseMostly(isProcessing, isHeld)
	p.touched = c
	how := []string{"cancel", "CANCELLED", "REFUSED"}[p.rnd.IntN(3)]
	to, code := how, "invalid_transition"
	var r payResp
	if how == "cancel" {
		r = p.call("POST", "/payments/"+c.id+"/cancel", nil)
		to, code = string(domain.TxCancelled), "charge_not_cancellable"
	} else {
		r = p.transition(c, how, "")
	}
	what := fmt.Sprintf("close (%s) %s held charge %s", how, c.status, c.id)
	p.did = what
	if c.status != string(domain.TxProcessing) {
		p.expect(what, r, 409, code)
		return
	}
	p.expect(what, r, 200, "")
	c.status, c.returnOwed = to, true
	if p.rnd.IntN(2) == 0 {
		p.advanceReturns()
		p.did += ", returns advanced"
	}
}

func settled(c *modelCharge) bool {
	return c.status == string(domain.TxPaid) || c.status == string(domain.TxApproved)
}

func (p *moneyProperty) refund() {
	c := p.chooseMostly(settled, func(*modelCharge) bool { return true })
	p.touched = c
	body := map[string]any{"idempotencyKey": p.e.key()}
	refundable := c.amount - c.reserved - c.disputed
	amount := refundable // omitted: what remains
	switch n := p.rnd.IntN(10); {
	case n < 5 && refundable > 0:
		amount = 1 + p.rnd.Int64N(refundable)
		body["amount"] = amount
	case n < 7:
		amount = max(refundable, 0) + 1 + p.rnd.Int64N(100)
		body["amount"] = amount
	}
	if c.kind != cardCharge && p.rnd.IntN(3) == 0 {
		body["strategy"] = []string{"cashout", "devolution"}[p.rnd.IntN(2)]
	}
	r := p.call("POST", "/payments/"+c.id+"/refund", body)
	what := fmt.Sprintf("refund %v of %s (%s, refundable %d)", body["amount"], c.id, c.status, refundable)
	p.did = what
	switch {
	case !settled(c):
		p.expect(what, r, 409, "charge_not_refundable")
		return
	case amount <= 0 || amount > refundable:
		p.expect(what, r, 400, "refund_exceeds_amount")
		return
	}
	// Refunds carry no Pix-out fee here: the test server's is zero.
	fromAvailable, takes, ok := p.wallet.debit(amount)
	if !ok {
		p.expect(what, r, 422, "insufficient_balance")
		return
	}
	p.expect(what, r, 201, "")
	if r.num("amount") != amount || r.str("status") != "PENDING" {
		p.t.Fatalf("%s: %s", what, r.Raw)
	}
	c.reserved += amount
	p.refunds = append(p.refunds, &modelRefund{id: r.str("id"), charge: c, amount: amount, status: "PENDING",
		fromAvailable: fromAvailable, takes: takes})
	p.did = fmt.Sprintf("%s: %s took %d available, %v pending", what, r.str("id"), fromAvailable, takes)
}

// refundFailed records that r failed: its reservation and its debit come
// back.
func (p *moneyProperty) refundFailed(r *modelRefund) {
	r.status = "FAILED"
	r.charge.reserved -= r.amount
	p.wallet.giveBack(r.fromAvailable, r.takes)
}

func (p *moneyProperty) failRefund() {
	var r *modelRefund
	if open := slices.DeleteFunc(slices.Clone(p.refunds), func(r *modelRefund) bool { return !r.open() }); len(open) > 0 && p.rnd.IntN(5) > 0 {
		r = open[p.rnd.IntN(len(open))]
	} else {
		r = p.refunds[p.rnd.IntN(len(p.refunds))]
	}
	p.touched = r.charge
	got := p.call("POST", "/test_helpers/refunds/"+r.id+"/fail", nil)
	what := fmt.Sprintf("fail %s refund %s of %d (%s)", r.status, r.id, r.amount, r.charge.id)
	p.did = what
	if !r.open() {
		p.expect(what, got, 409, "refund_not_open")
		return
	}
	p.expect(what, got, 200, "")
	if got.str("status") != "FAILED" {
		p.t.Fatalf("%s: %s", what, got.Raw)
	}
	p.refundFailed(r)
}

// completeRefunds runs the refund worker and takes the outcome of each
// open refund from the API: a confirmed refund may close its payment as
// REFUNDED; one the sandbox failed gives its debit back.
func (p *moneyProperty) completeRefunds() {
	p.e.advanceRefunds()
	var done []string
	for _, c := range p.charges {
		if !slices.ContainsFunc(p.refunds, func(r *modelRefund) bool { return r.charge == c && r.open() }) {
			continue
		}
		list := p.call("GET", "/payments/"+c.id+"/refunds", nil)
		p.expect("list refunds", list, 200, "")
		status := map[string]string{}
		data, _ := list.Body["data"].([]any)
		for _, d := range data {
			m, _ := d.(map[string]any)
			id, _ := m["id"].(string)
			status[id], _ = m["status"].(string)
		}
		for _, r := range p.refunds {
			if r.charge != c || !r.open() {
				continue
			}
			switch status[r.id] {
			case "REFUNDED":
				r.status = "REFUNDED"
				c.refunded += r.amount
				if c.refunded == c.amount && (settled(c) || c.status == string(domain.TxDispute)) {
					c.status = string(domain.TxRefunded)
				}
			case "FAILED":
				p.refundFailed(r)
			default:
				p.t.Fatalf("refund %s of %s reads %q after the refund worker ran: %s", r.id, c.id, status[r.id], list.Raw)
			}
			done = append(done, r.id+" "+r.status)
		}
		p.checkStatus(c)
	}
	p.did = fmt.Sprintf("refunds advanced: %v", done)
}

// disputeTransitions is what the transition helper accepts among the
// statuses a credited payment moves through (domain.CanTransition).
var disputeTransitions = map[string][]string{
	"PAID":     {"DISPUTE", "CHARGEBACK"},
	"APPROVED": {"DISPUTE", "CHARGEBACK"},
	"DISPUTE":  {"PAID", "APPROVED", "CHARGEBACK"},
}

// disputeStatus opens a dispute, charges back, or settles a dispute back
// to paid: status only, no money moves.
func (p *moneyProperty) disputeStatus() {
	c := p.choose(p.charges, func(c *modelCharge) bool { return c.credited })
	p.touched = c
	to := []string{"DISPUTE", "CHARGEBACK", c.settledStatus()}[p.rnd.IntN(3)]
	r := p.transition(c, to, "")
	what := fmt.Sprintf("transition %s %s → %s", c.id, c.status, to)
	p.did = what
	if !slices.Contains(disputeTransitions[c.status], to) {
		p.expect(what, r, 409, "invalid_transition")
		return
	}
	p.expect(what, r, 200, "")
	c.status = to
}

// medReturn has the payer's PSP take money back from a Pix (a MED
// return): available first, then pending, the rest owed.
func (p *moneyProperty) medReturn() {
	c := p.chooseMostly(func(c *modelCharge) bool { return c.kind != cardCharge && c.credited },
		func(c *modelCharge) bool { return c.kind != cardCharge })
	if p.rnd.IntN(2) == 0 {
		// A return the wallet cannot cover, when there is one.
		wallet := p.wallet.available + p.wallet.pending()
		if o := p.choose(p.charges, func(o *modelCharge) bool {
			return o.kind != cardCharge && o.credited && o.amount-o.reserved-o.disputed > wallet
		}); o != nil {
			c = o
		}
	}
	p.touched = c
	left := c.amount - c.reserved - c.disputed
	body := map[string]any{"reason": []string{"fraud", "operational"}[p.rnd.IntN(2)]}
	amount := left // omitted: what the payment has left
	switch n := p.rnd.IntN(10); {
	case n < 5 && left > 0:
		amount = 1 + p.rnd.Int64N(left)
		body["amount"] = amount
	case n < 7:
		amount = left + 1 + p.rnd.Int64N(100)
		body["amount"] = amount
	}
	r := p.call("POST", "/test_helpers/charges/"+c.chargeID()+"/med_return", body)
	what := fmt.Sprintf("MED return %v of %s (%s, left %d)", body["amount"], c.id, c.status, left)
	p.did = what
	switch {
	case body["amount"] != nil && amount <= 0:
		p.expect(what, r, 400, "parameter_invalid")
		return
	case !c.credited:
		p.expect(what, r, 409, "charge_not_disputable")
		return
	case amount <= 0 || amount > left:
		p.expect(what, r, 400, "dispute_exceeds_amount")
		return
	}
	p.expect(what, r, 200, "")
	available, pending, owed := p.wallet.available, p.wallet.pending(), p.wallet.owed
	p.wallet.dispute(amount)
	c.disputed += amount
	if settled(c) {
		c.status = string(domain.TxDispute)
	}
	p.did = fmt.Sprintf("%s: took %d available, %d pending, owes %d more", what,
		available-p.wallet.available, pending-p.wallet.pending(), p.wallet.owed-owed)
}

// maxPayout is the largest payout available covers with its fee.
func maxPayout(available int64) int64 {
	a := available
	for a > 0 && a+payoutFee(a) > available {
		a -= max(1, (a+payoutFee(a)-available)/2)
	}
	for a+1+payoutFee(a+1) <= available {
		a++
	}
	return max(a, 0)
}

func (p *moneyProperty) createPayout() {
	spendable := p.wallet.available - p.wallet.owed // a debt is never paid out
	top := maxPayout(spendable)
	var amount int64
	switch n := p.rnd.IntN(10); {
	case top == 0:
		amount = 1 + p.rnd.Int64N(1_000)
	case n < 5:
		// All of it: a MED return then reaches pending, and the debt.
		amount = top
	case n < 7:
		amount = top + 1 + p.rnd.Int64N(50)
	default:
		amount = 1 + p.rnd.Int64N(top)
	}
	fee := payoutFee(amount)
	r := p.e.postPayout(p.e.acct.TestKey, p.e.key(), map[string]any{"amount": amount, "destination": map[string]any{"pix_key": "52998224725"}})
	what := fmt.Sprintf("payout of %d + fee %d (available %d)", amount, fee, p.wallet.available)
	p.did = what
	if r.Status >= 500 {
		p.t.Fatalf("%s: %d %s", what, r.Status, r.Raw)
	}
	if amount+fee > spendable {
		p.expect(what, r, 422, "insufficient_balance")
		return
	}
	p.expect(what, r, 201, "")
	if r.num("fee") != fee || r.str("status") != "pending" {
		p.t.Fatalf("%s: %s", what, r.Raw)
	}
	p.wallet.available -= amount + fee
	p.payouts = append(p.payouts, &modelPayout{id: r.str("id"), held: amount + fee, status: "pending"})
	p.did += ": " + r.str("id")
}

// settlePayout pays, fails or cancels a payout; failed and cancelled ones
// give back what they held.
func (p *moneyProperty) settlePayout() {
	po := p.payouts[p.rnd.IntN(len(p.payouts))]
	open := po.status == "pending" || po.status == "processing"
	if !open && p.rnd.IntN(4) > 0 {
		for _, o := range p.payouts {
			if o.status == "pending" || o.status == "processing" {
				po, open = o, true
				break
			}
		}
	}
	action := []string{"pay", "fail", "cancel"}[p.rnd.IntN(3)]
	path := "/test_helpers/payouts/" + po.id + "/" + action
	if action == "cancel" {
		path = "/payouts/" + po.id + "/cancel"
	}
	r := p.call("POST", path, nil)
	what := fmt.Sprintf("%s %s payout %s of %d", action, po.status, po.id, po.held)
	p.did = what
	want := map[string]string{"pay": "paid", "fail": "failed", "cancel": "cancelled"}[action]
	switch {
	case action == "cancel" && po.status != "pending":
		p.expect(what, r, 409, "payout_not_cancellable")
		return
	case !open:
		p.expect(what, r, 409, "payout_not_open")
		return
	}
	p.expect(what, r, 200, "")
	if r.str("status") != want {
		p.t.Fatalf("%s: %s", what, r.Raw)
	}
	po.status = want
	if want != "paid" {
		p.wallet.available += po.held
	}
}

// passTime moves the clock by up to 40 days, releases the holds due,
// advances automatic returns and, sometimes, sends the pending payouts.
func (p *moneyProperty) passTime() {
	d := time.Duration(p.rnd.IntN(41))*24*time.Hour + time.Duration(p.rnd.IntN(24))*time.Hour
	if p.rnd.IntN(4) == 0 {
		d = 0
	}
	p.e.clock.Advance(d)
	p.now += d
	if _, err := p.e.srv.App.Payments.ReleaseDue(p.ctx); err != nil {
		p.t.Fatalf("release due: %v", err)
	}
	p.wallet.release(p.now)
	p.advanceReturns()
	p.did = fmt.Sprintf("clock +%s (now +%s), holds released, returns advanced", d, p.now)
	if p.rnd.IntN(3) == 0 {
		if _, err := p.e.srv.App.Payouts.SendPayouts(p.ctx); err != nil {
			p.t.Fatalf("send payouts: %v", err)
		}
		for _, po := range p.payouts {
			if po.status == "pending" {
				po.status = "processing"
			}
		}
		p.did += ", payouts sent"
	}
}

// advanceReturns runs the automatic returns; then no payer's money is
// held but that of the Pix still held for review, and every held Pix that
// was closed went back to its payer in full.
func (p *moneyProperty) advanceReturns() {
	if _, err := p.e.srv.App.Charges.AdvanceReturns(p.ctx); err != nil {
		p.t.Fatalf("advance returns: %v", err)
	}
	var held int64
	for _, c := range p.charges {
		if isProcessing(c) {
			held += c.amount
		}
	}
	var payerFunds int64
	err := p.e.srv.App.DB.Bun().NewSelect().Table("ledger_postings").ColumnExpr("COALESCE(SUM(amount), 0)").
		Where("account_id = ?", p.e.acct.AccountID).Where("ledger_account = ?", string(domain.LedgerPayerFunds)).
		Scan(p.ctx, &payerFunds)
	if err != nil {
		p.t.Fatal(err)
	}
	if payerFunds != held {
		p.t.Fatalf("payer funds %d after the returns ran, want %d: the Pix held for review", payerFunds, held)
	}
	returned := map[string]int64{}
	for _, r := range p.e.srv.Sandbox.Returns() {
		returned[r.ChargeID] += r.Amount
	}
	for _, c := range p.charges {
		if !c.returnOwed {
			continue
		}
		if got := returned[strings.TrimPrefix(c.id, domain.PrefixTransaction)]; got != c.amount {
			p.t.Fatalf("closed held charge %s of %d: the sandbox returned %d to its payer", c.id, c.amount, got)
		}
		c.returnOwed = false
	}
}

// checkStatus reads c and compares its status with the model's.
func (p *moneyProperty) checkStatus(c *modelCharge) {
	p.t.Helper()
	g := p.call("GET", "/payments/"+c.id, nil)
	p.expect("read "+c.id, g, 200, "")
	if g.str("status") != c.status {
		p.t.Fatalf("payment %s reads %s, the model expects %s: %s", c.id, g.str("status"), c.status, g.Raw)
	}
}

// check runs after every step: the ledger verifies, the wallet is the
// model's, and the payment the step touched reads the model's status.
func (p *moneyProperty) check() {
	p.t.Helper()
	p.e.verifyLedger()
	w := p.wallet
	b := p.call("GET", "/wallets/balance?currency=BRL", nil)
	p.expect("balance", b, 200, "")
	var nextAmount any
	if len(w.holds) > 0 {
		nextAmount = float64(w.holds[0].amount)
	}
	if b.num("available") != w.available || b.num("pending") != w.pending() || b.Body["next_release_amount"] != nextAmount {
		p.t.Fatalf("balance %s, the model has available %d pending %d (holds %v) owed %d",
			b.Raw, w.available, w.pending(), w.holds, w.owed)
	}
	ws, err := p.e.srv.App.Payments.Wallets(p.ctx, callerOf(p.e))
	if err != nil {
		p.t.Fatal(err)
	}
	var got domain.Balance
	for _, wl := range ws {
		if wl.Currency == domain.CurrencyBRL {
			got = wl.Balance
		}
	}
	if got.Available != w.available || got.Pending != w.pending() || got.Owed != w.owed {
		p.t.Fatalf("wallet available %d pending %d owed %d, the model has %d %d %d",
			got.Available, got.Pending, got.Owed, w.available, w.pending(), w.owed)
	}
	if p.touched != nil {
		p.checkStatus(p.touched)
	}
}

// postKeyed sends POST path with an Idempotency-Key header, as the charges
// surface wants.
func (e *payEnv) postKeyed(path, idemKey string, body any) payResp {
	e.t.Helper()
	h := testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": idemKey}
	r := testkit.Do(e.t, "POST", e.srv.BaseURL+path, body, h)
	out := payResp{Status: r.Status, Header: r.Header, Raw: r.Body}
	if err := json.Unmarshal(r.Body, &out.Body); err != nil {
		e.t.Fatalf("POST %s: %s: %v", path, r.Body, err)
	}
	return out
}
