package httpapi_test

import (
	"encoding/json"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
)

// batchCPF is the n-th of a run of valid CPFs: each item of a big batch
// bills its own debtor, as the fraud guard's per-payer velocity wants.
func batchCPF(n int) string {
	d := []byte(fmt.Sprintf("%09d", 100_000_000+n))
	for _, size := range []int{9, 10} {
		sum := 0
		for i := range size {
			sum += int(d[i]-'0') * (size + 1 - i)
		}
		c := sum * 10 % 11 % 10
		d = append(d, byte('0'+c))
	}
	return string(d)
}

// batchItem is a due-date create for debtor n, due in ten days.
func (e *dueEnv) batchItem(n int) map[string]any {
	return map[string]any{"amount": 1000 + n, "payment_method": "pix", "description": fmt.Sprintf("Mensalidade %d", n),
		"customer": map[string]any{"name": fmt.Sprintf("Aluno %d", n), "document": batchCPF(n)},
		"due_date": e.due.String(), "fine": map[string]any{"type": "percent", "rate": "2.00"},
		"metadata": map[string]any{"aluno": n}}
}

func (e *dueEnv) postBatch(key string, body any, idem string) apiResp {
	e.t.Helper()
	h := testkit.Header{"apikey": key}
	if idem != "" {
		h["Idempotency-Key"] = idem
	}
	return decodeResp(e.t, testkit.Do(e.t, "POST", e.srv.BaseURL+"/charges/batch", body, h))
}

// batchJSON is a batch as the API answers it.
type batchJSON struct {
	ID          string  `json:"id"`
	Object      string  `json:"object"`
	Status      string  `json:"status"`
	Total       int     `json:"total"`
	Created     int     `json:"created"`
	Refused     int     `json:"refused"`
	Pending     int     `json:"pending"`
	CreatedAt   string  `json:"created_at"`
	CompletedAt *string `json:"completed_at"`
	Items       []struct {
		Index  int    `json:"index"`
		Status string `json:"status"`
		Charge *struct {
			ID       string `json:"id"`
			Amount   int64  `json:"amount"`
			Status   string `json:"status"`
			DueDate  string `json:"due_date"`
			Customer struct {
				Document string `json:"document"`
			} `json:"customer"`
			Pix *struct {
				BRCode string `json:"br_code"`
				TxID   string `json:"txid"`
			} `json:"pix"`
			Metadata map[string]any `json:"metadata"`
		} `json:"charge"`
		Error *struct {
			Type    string `json:"type"`
			Code    string `json:"code"`
			Message string `json:"message"`
			Param   string `json:"param"`
		} `json:"error"`
	} `json:"items"`
}

func batchOf(t testing.TB, r apiResp) batchJSON {
	t.Helper()
	var b batchJSON
	if err := json.Unmarshal(r.Raw, &b); err != nil {
		t.Fatalf("decode batch: %v: %.300s", err, r.Raw)
	}
	return b
}

// awaitBatch reads the batch until it is completed. The process that
// accepted it runs it in the background for a while; past that the
// charge-batches worker takes it over, which a deployed server runs every
// second and this loop every two.
func (e *dueEnv) awaitBatch(id string, within time.Duration) batchJSON {
	e.t.Helper()
	deadline, tick := time.Now().Add(within), time.Now()
	for {
		if time.Since(tick) > 2*time.Second {
			if _, err := e.srv.App.Charges.ProcessChargeBatches(e.t.Context()); err != nil {
				e.t.Fatalf("charge-batches worker: %v", err)
			}
			tick = time.Now()
		}
		r := e.call("GET", "/charges/batch/"+id, e.acct.TestKey, nil)
		e.want(r, 200, "")
		b := batchOf(e.t, r)
		if b.Status == "completed" {
			return b
		}
		if time.Now().After(deadline) {
			e.t.Fatalf("batch %s not completed within %s: %d created, %d refused, %d pending", id, within, b.Created, b.Refused, b.Pending)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// A batch of 1,000 due-date charges in one call is accepted with 202 at
// once, every item pending, and completes with 1,000 charges, one per
// item, each with its own BR Code, its terms and its debtor (masked, as in
// every list); the charges read alone as any other. On SQLite, whose one
// writer makes a thousand creates take minutes under -race, the batch is
// of 250.
func TestChargeBatchOfAThousand(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			n := domain.MaxBatchCharges
			if d.name == "sqlite" {
				n = 250
			}
			items := make([]any, n)
			for i := range items {
				items[i] = e.batchItem(i)
			}
			started := time.Now()
			r := e.postBatch(e.acct.TestKey, map[string]any{"charges": items}, e.key())
			e.want(r, 202, "")
			t.Logf("202 for %d items in %s", len(items), time.Since(started))
			b := batchOf(t, r)
			if !strings.HasPrefix(b.ID, domain.PrefixChargeBatch) || b.Object != "charge_batch" || b.Status != "processing" ||
				b.Total != n || b.Pending != n || b.Created != 0 || b.Refused != 0 || len(b.Items) != n || b.CompletedAt != nil {
				t.Fatalf("202 body: %.400s", r.Raw)
			}
			for i, it := range b.Items {
				if it.Index != i || it.Status != "pending" || it.Charge != nil || it.Error != nil {
					t.Fatalf("item %d in the 202: %+v", i, it)
				}
			}
			done := e.awaitBatch(b.ID, 10*time.Minute)
			if done.Created != n || done.Refused != 0 || done.Pending != 0 || done.CompletedAt == nil {
				t.Fatalf("completed batch: %d created %d refused %d pending, completed_at %v", done.Created, done.Refused, done.Pending, done.CompletedAt)
			}
			charges, codes := map[string]bool{}, map[string]bool{}
			for i, it := range done.Items {
				c := it.Charge
				if it.Index != i || it.Status != "created" || c == nil || c.Pix == nil || c.Pix.BRCode == "" {
					t.Fatalf("item %d: %+v", i, it)
				}
				if c.Amount != int64(1000+i) || c.DueDate != e.due.String() || c.Status != "pending" ||
					c.Customer.Document != domain.MaskDocument(batchCPF(i)) || fmt.Sprint(c.Metadata["aluno"]) != fmt.Sprint(i) {
					t.Fatalf("item %d's charge: %+v", i, c)
				}
				charges[c.ID], codes[c.Pix.BRCode] = true, true
			}
			if len(charges) != n || len(codes) != n {
				t.Fatalf("%d distinct charges and %d distinct BR Codes, want %d of each", len(charges), len(codes), n)
			}
			one := e.call("GET", "/charges/"+done.Items[7].Charge.ID, e.acct.TestKey, nil)
			e.want(one, 200, "")
			if cust, _ := one.Body["customer"].(map[string]any); cust["document"] != batchCPF(7) || one.str("due_date") != e.due.String() {
				t.Errorf("the charge read alone: %.300s", one.Raw)
			}
		})
	}
}

// Items are checked one by one: each invalid one is refused with the error
// its create alone would get (an item without due_date too: a batch holds
// due-date charges only), naming the parameter as it sits in the item; the
// valid ones are created.
func TestChargeBatchRefusesInvalidItemsOneByOne(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			edit := func(n int, f func(map[string]any)) map[string]any {
				it := e.batchItem(n)
				f(it)
				return it
			}
			items := []any{
				e.batchItem(0),
				edit(1, func(m map[string]any) { delete(m, "due_date"); delete(m, "fine") }),
				edit(2, func(m map[string]any) {
					m["customer"] = map[string]any{"name": "Sem Documento", "document": "12345678900"}
				}),
				edit(3, func(m map[string]any) { m["colour"] = "blue" }),
				edit(4, func(m map[string]any) { m["amount"] = "1000" }),
				"not a charge",
				edit(6, func(m map[string]any) { m["due_date"] = e.today.AddDays(-1).String() }),
				edit(7, func(m map[string]any) { m["customer"].(map[string]any)["cpf"] = "x" }),
				edit(8, func(m map[string]any) { delete(m, "payment_method") }),
				e.batchItem(9),
				edit(10, func(m map[string]any) { m["description"] = "nul \x00 here" }),
			}
			r := e.postBatch(e.acct.TestKey, map[string]any{"charges": items}, e.key())
			e.want(r, 202, "")
			b := batchOf(t, r)
			if b.Total != 11 || b.Refused != 9 || b.Pending != 2 {
				t.Fatalf("202 counts: %.600s", r.Raw)
			}
			want := map[int][3]string{ // code, param, type
				1:  {"parameter_missing", "due_date", "invalid_request_error"},
				2:  {"parameter_invalid", "customer.document", "invalid_request_error"},
				3:  {"parameter_unknown", "colour", "invalid_request_error"},
				4:  {"parameter_invalid", "amount", "invalid_request_error"},
				5:  {"parameter_invalid", "", "invalid_request_error"},
				6:  {"parameter_invalid", "due_date", "invalid_request_error"},
				7:  {"parameter_unknown", "customer.cpf", "invalid_request_error"},
				8:  {"parameter_missing", "payment_method", "invalid_request_error"},
				10: {"body_invalid", "", "invalid_request_error"},
			}
			done := e.awaitBatch(b.ID, time.Minute)
			if done.Created != 2 || done.Refused != 9 || done.Pending != 0 {
				t.Fatalf("completed counts: %+v", done)
			}
			for i, it := range done.Items {
				w, refused := want[i]
				switch {
				case refused && (it.Status != "refused" || it.Error == nil || it.Charge != nil):
					t.Errorf("item %d: %+v, want refused", i, it)
				case refused && (it.Error.Code != w[0] || it.Error.Param != w[1] || it.Error.Type != w[2] || it.Error.Message == ""):
					t.Errorf("item %d's error %+v, want %v", i, *it.Error, w)
				case !refused && (it.Status != "created" || it.Charge == nil || it.Error != nil):
					t.Errorf("item %d: %+v, want created", i, it)
				}
			}
			if strings.Contains(string(e.call("GET", "/charges/batch/"+b.ID, e.acct.TestKey, nil).Raw), "12345678900") {
				t.Error("a refused item's document is in the batch")
			}
		})
	}
}

// The same key and body answer the same batch (its 202, replayed); the
// same key with another body is 409; the key is required; another
// account's batch, or the same account's in the other mode, is 404.
func TestChargeBatchReplayAndScope(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newDueEnv(t, d.dsn(t))
			body := map[string]any{"charges": []any{e.batchItem(1), e.batchItem(2)}}
			key := e.key()
			first := e.postBatch(e.acct.TestKey, body, key)
			e.want(first, 202, "")
			again := e.postBatch(e.acct.TestKey, body, key)
			e.want(again, 202, "")
			if string(again.Raw) != string(first.Raw) || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay: %s (replayed %q), want %s", again.Raw, again.Header.Get("Idempotent-Replayed"), first.Raw)
			}
			id := batchOf(t, first).ID
			done := e.awaitBatch(id, time.Minute)
			if done.Created != 2 {
				t.Fatalf("batch: %+v", done)
			}
			if late := e.postBatch(e.acct.TestKey, body, key); string(late.Raw) != string(first.Raw) {
				t.Errorf("a replay after the batch completed: %s", late.Raw)
			}
			other := map[string]any{"charges": []any{e.batchItem(3)}}
			e.want(e.postBatch(e.acct.TestKey, other, key), 409, "idempotency_key_reused")
			wantParam(t, e.postBatch(e.acct.TestKey, other, ""), 400, "idempotency_key_missing", "Idempotency-Key")

			stranger := e.srv.NewAccount(t, "Outra Loja")
			for name, key := range map[string]string{"another account": stranger.TestKey, "live mode": e.acct.LiveKey} {
				if r := e.call("GET", "/charges/batch/"+id, key, nil); r.Status != 404 || r.code() != "resource_not_found" {
					t.Errorf("%s: %d %s", name, r.Status, r.Raw)
				}
			}
			raw := strings.TrimPrefix(id, domain.PrefixChargeBatch)
			e.want(e.call("GET", "/charges/batch/"+raw, e.acct.TestKey, nil), 200, "")
			for _, bad := range []string{"chbatch_" + strings.Repeat("z", 35), "nope", "ch_" + raw} {
				e.want(e.call("GET", "/charges/batch/"+bad, e.acct.TestKey, nil), 404, "resource_not_found")
			}
			// The items' charges are the caller's alone.
			e.want(e.call("GET", "/charges/"+done.Items[0].Charge.ID, stranger.TestKey, nil), 404, "resource_not_found")
		})
	}
}

// What is wrong with the request as a whole — its envelope, an empty list
// or more than 1,000 charges, a body over the batch's 4 MiB — is a 400 (or
// 413) for the whole request, and no batch exists.
func TestChargeBatchEnvelopeRefusals(t *testing.T) {
	t.Parallel()
	e := newDueEnv(t, "")
	many := make([]any, domain.MaxBatchCharges+1)
	for i := range many {
		many[i] = e.batchItem(i)
	}
	for _, tc := range []struct {
		name  string
		body  any
		code  string
		param string
	}{
		{"1,001 charges", map[string]any{"charges": many}, "parameter_invalid", "charges"},
		{"no charge", map[string]any{"charges": []any{}}, "parameter_invalid", "charges"},
		{"charges missing", map[string]any{}, "parameter_missing", "charges"},
		{"charges null", map[string]any{"charges": nil}, "parameter_missing", "charges"},
		{"charges not a list", map[string]any{"charges": e.batchItem(1)}, "parameter_invalid", "charges"},
		{"an unknown member", map[string]any{"charges": []any{e.batchItem(1)}, "mode": "fast"}, "parameter_unknown", "mode"},
		{"not JSON", `{"charges": [`, "body_invalid", ""},
		{"no body", "", "body_missing", ""},
	} {
		r := e.postBatch(e.acct.TestKey, tc.body, e.key())
		if r.Status != 400 || r.code() != tc.code || r.param() != tc.param {
			t.Errorf("%s: %d %s param %q, want 400 %s %q", tc.name, r.Status, r.code(), r.param(), tc.code, tc.param)
		}
	}
	huge := `{"charges":[{"amount":1,"payment_method":"pix","description":"` + strings.Repeat("a", 5<<20) + `"}]}`
	if r := e.postBatch(e.acct.TestKey, huge, e.key()); r.Status != 413 || r.code() != "request_too_large" {
		t.Errorf("a 5 MiB body: %d %.200s", r.Status, r.Raw)
	}
	ct := testkit.Do(t, "POST", e.srv.BaseURL+"/charges/batch", `{"charges":[]}`,
		testkit.Header{"apikey": e.acct.TestKey, "Idempotency-Key": e.key(), "Content-Type": "text/plain"})
	if ct.Status != 400 {
		t.Errorf("Content-Type text/plain: %d", ct.Status)
	}
}
