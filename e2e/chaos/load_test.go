//go:build chaos

package chaos

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"math/rand/v2"
	"net/http"
	"sync/atomic"
	"time"
)

// opDeadline bounds one operation with its retries. It is longer than the
// 30 s idempotency lock a killed request leaves behind, so an operation
// outlives a blocked key and the block is measured rather than given up on.
const opDeadline = 75 * time.Second

// api sends the clients' requests to the cluster's rotation, round robin,
// and records every exchange.
type api struct {
	cluster *cluster
	rec     *recorder
	key     string
	http    *http.Client
	next    atomic.Uint64
}

func newAPI(c *cluster, rec *recorder, key string) *api {
	return &api{cluster: c, rec: rec, key: key, http: &http.Client{
		Timeout:   15 * time.Second,
		Transport: &http.Transport{MaxIdleConnsPerHost: 64, IdleConnTimeout: 30 * time.Second},
	}}
}

// reply is an HTTP answer; status 0 with err set is a transport error.
type reply struct {
	status int
	body   []byte
	err    error
}

// code is the error code of an error envelope.
func (r reply) code() string {
	var env struct {
		Error struct {
			Code string `json:"code"`
		} `json:"error"`
	}
	_ = json.Unmarshal(r.body, &env)
	return env.Error.Code
}

func (r reply) field(name string) string {
	var m map[string]any
	_ = json.Unmarshal(r.body, &m)
	s, _ := m[name].(string)
	return s
}

// transient reports whether a client should retry the same request.
func (r reply) transient() bool {
	switch {
	case r.err != nil, r.status >= 500, r.status == http.StatusTooManyRequests:
		return true
	case r.status == http.StatusConflict:
		return r.code() == "idempotency_key_in_use"
	}
	return false
}

// send makes one exchange with addr, or with the next process in the
// rotation when addr is empty.
func (a *api) send(ctx context.Context, op, addr, method, path string, body []byte, hdr map[string]string) reply {
	if addr == "" {
		rot := a.cluster.rotation()
		if len(rot) == 0 {
			return reply{err: fmt.Errorf("no process in rotation")}
		}
		addr = rot[a.next.Add(1)%uint64(len(rot))]
	}
	var rd io.Reader
	if body != nil {
		rd = bytes.NewReader(body)
	}
	req, err := http.NewRequestWithContext(ctx, method, "http://"+addr+"/v1"+path, rd)
	if err != nil {
		return reply{err: err}
	}
	req.Header.Set("apikey", a.key)
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	for k, v := range hdr {
		req.Header.Set(k, v)
	}
	start := a.rec.since()
	resp, err := a.http.Do(req)
	var r reply
	if err != nil {
		r.err = err
	} else {
		r.status = resp.StatusCode
		r.body, r.err = io.ReadAll(resp.Body)
		resp.Body.Close()
		if r.err != nil {
			r.status = 0
		}
	}
	if ctx.Err() == nil { // an exchange the run itself cut short says nothing
		a.rec.addAttempt(attempt{start: start, end: a.rec.since(), status: r.status, op: op})
	}
	return r
}

// retry repeats a request until it gets an answer that is not transient,
// as a careful merchant integration does, with the same body and the same
// Idempotency-Key. onInUse is told of each 409 idempotency_key_in_use.
func (a *api) retry(ctx context.Context, op, addr, method, path string, body []byte, hdr map[string]string,
	onInUse func(time.Duration)) (reply, int) {
	deadline := time.Now().Add(opDeadline)
	backoff := 50 * time.Millisecond
	for tries := 0; ; tries++ {
		r := a.send(ctx, op, addr, method, path, body, hdr)
		if !r.transient() || time.Now().After(deadline) || ctx.Err() != nil {
			return r, tries
		}
		if r.status == http.StatusConflict && onInUse != nil {
			onInUse(a.rec.since())
		}
		select {
		case <-ctx.Done():
		case <-time.After(backoff + time.Duration(rand.Int64N(int64(backoff)))):
		}
		backoff = min(backoff*2, time.Second)
	}
}

// createCharge creates (or replays) the charge of key with amount.
func (a *api) createCharge(ctx context.Context, addr string, k *keyRec, amount int64) reply {
	hdr := map[string]string{"Idempotency-Key": k.key}
	var firstInUse time.Duration = -1
	r, tries := a.retry(ctx, "create", addr, http.MethodPost, "/charges", k.body, hdr, func(at time.Duration) {
		if firstInUse < 0 {
			firstInUse = at
		}
	})
	a.rec.mu.Lock()
	k.trials += tries
	if firstInUse >= 0 && k.inUse < 0 {
		k.inUse = firstInUse
	}
	a.rec.mu.Unlock()
	if firstInUse >= 0 {
		a.rec.blocked(k, a.rec.since()-firstInUse)
	}
	if r.status == http.StatusCreated {
		a.rec.answered(k, r.field("id"), amount)
	}
	return r
}

// chargeBody is the create request of key: the key rides in the
// description so the database shows which key made which charge.
func chargeBody(key string, amount int64) []byte {
	b, _ := json.Marshal(map[string]any{"amount": amount, "payment_method": "pix", "description": "chaos " + key})
	return b
}

// client is one merchant backend: a seeded stream of operations.
type client struct {
	api   *api
	rng   *rand.Rand
	name  string
	seed  int64
	acked []*keyRec
}

// iteration creates a charge and, by the client's dice, replays an old
// key, pays the charge (sometimes twice at once) and refunds part of it.
func (c *client) iteration(ctx context.Context, i int) {
	rec := c.api.rec
	amount := 100 + c.rng.Int64N(50_000)
	key := fmt.Sprintf("chaos-%d-%s-%d", c.seed, c.name, i)
	k := rec.newKey(key, chargeBody(key, amount))
	r := c.api.createCharge(ctx, "", k, amount)
	rec.count("create")
	dice := [4]float64{c.rng.Float64(), c.rng.Float64(), c.rng.Float64(), c.rng.Float64()}
	if r.status != http.StatusCreated {
		if ctx.Err() == nil {
			rec.violate("create %s: final answer %d %s (%v)", key, r.status, r.code(), r.err)
		}
		return
	}
	c.acked = append(c.acked, k)
	id := r.field("id")
	if dice[0] < 0.10 && len(c.acked) > 1 {
		c.replay(ctx, c.acked[c.rng.IntN(len(c.acked)-1)])
	}
	if dice[1] >= 0.65 {
		return
	}
	if !c.pay(ctx, id, dice[2] < 0.08) || dice[3] >= 0.35 {
		return
	}
	c.refunds(ctx, id, amount)
}

// replay sends an old key again: the answer must be the same charge.
func (c *client) replay(ctx context.Context, k *keyRec) {
	c.api.rec.count("replay")
	var want string
	c.api.rec.mu.Lock()
	for id := range k.ids {
		want = id
	}
	c.api.rec.mu.Unlock()
	r := c.api.createCharge(ctx, "", k, 0)
	if ctx.Err() == nil && (r.status != http.StatusCreated || r.field("id") != want) {
		c.api.rec.violate("replay of %s: %d %s, want 201 %s", k.key, r.status, r.field("id"), want)
	}
}

// pay pays the charge through the sandbox, twice at once when double is
// set, and reports whether it ended paid.
func (c *client) pay(ctx context.Context, id string, double bool) bool {
	rec := c.api.rec
	rec.count("pay")
	n := 1
	if double {
		n = 2
		rec.count("double-pay")
	}
	done := make(chan reply, n)
	for range n {
		go func() {
			r, _ := c.api.retry(ctx, "pay", "", http.MethodPost, "/test_helpers/charges/"+id+"/pay", []byte("{}"), nil, nil)
			done <- r
		}()
	}
	paid := false
	for range n {
		r := <-done
		switch {
		case r.status == http.StatusOK && r.field("status") == "paid":
			paid = true
		case r.status == http.StatusConflict: // paid by the other request, or by a retried one
		case ctx.Err() != nil:
		default:
			rec.violate("pay %s: %d %s (%v)", id, r.status, r.code(), r.err)
		}
	}
	if !paid && ctx.Err() == nil {
		r, _ := c.api.retry(ctx, "read", "", http.MethodGet, "/charges/"+id, nil, nil, nil)
		paid = r.status == http.StatusOK && r.field("status") == "paid"
		if r.status != http.StatusOK && ctx.Err() == nil {
			rec.violate("read %s after pay: %d", id, r.status)
		}
	}
	if paid {
		rec.markPaid(id)
	}
	return paid
}

// refunds takes one or two partial refunds of a paid charge and sometimes
// asks for more than remains, which must be refused.
func (c *client) refunds(ctx context.Context, id string, amount int64) {
	rec := c.api.rec
	remaining := amount
	for j := range 1 + c.rng.IntN(2) {
		part := 1 + c.rng.Int64N(max(remaining/2, 1))
		if part > remaining {
			return
		}
		key := fmt.Sprintf("%s-refund-%d", id, j)
		f := rec.newRefund(key, id, part)
		r := c.refund(ctx, key, id, part)
		rec.count("refund")
		switch {
		case r.status == http.StatusCreated:
			rec.refundAnswered(f, r.field("id"))
			remaining -= part
		case r.status == http.StatusUnprocessableEntity && r.code() == "insufficient_balance":
			return // the wallet had not enough yet: a correct refusal
		case ctx.Err() != nil:
			return
		default:
			rec.violate("refund %s of %d on %s: %d %s (%v)", key, part, id, r.status, r.code(), r.err)
			return
		}
	}
	if c.rng.Float64() < 0.3 {
		rec.count("over-refund")
		r := c.refund(ctx, id+"-over", id, remaining+1)
		if ctx.Err() == nil && !(r.status == http.StatusBadRequest && r.code() == "refund_exceeds_amount") {
			rec.violate("refund of %d over the %d remaining on %s: %d %s", remaining+1, remaining, id, r.status, r.code())
		}
	}
}

func (c *client) refund(ctx context.Context, key, id string, part int64) reply {
	body, _ := json.Marshal(map[string]any{"idempotencyKey": key, "amount": part, "reason": "chaos " + key})
	r, _ := c.api.retry(ctx, "refund", "", http.MethodPost, "/payments/"+id+"/refund", body, nil, nil)
	return r
}
