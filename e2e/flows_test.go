package e2e_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"testing"
)

// The main flow: create on both create paths, read by both id forms, pay in
// test mode, read paid.
func TestCreateReadPayRead(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja Flow")

		body := map[string]any{
			"amount": 12345, "currency": "BRL", "payment_method": "pix", "description": "Pedido 42",
			"expires_in": 900,
			"customer":   map[string]any{"name": "Maria Silva", "document": "529.982.247-25", "email": "maria@example.com", "phone": "+5511999990000"},
			// A big integer and a nested object come back exactly as sent.
			"metadata": map[string]any{"order": json.Number("123456789012345678"), "nested": map[string]any{"a": []any{1, "x"}}},
		}
		r1 := a.test.create(t, "/charges", body).want(t, http.StatusCreated)
		pixBody := map[string]any{}
		for k, v := range body {
			if k != "payment_method" {
				pixBody[k] = v
			}
		}
		r2 := a.test.create(t, "/pix/charges", pixBody).want(t, http.StatusCreated)

		c1, c2 := r1.charge(t), r2.charge(t)
		if c1.ID == c2.ID {
			t.Fatalf("two creates with different keys returned the same charge %s", c1.ID)
		}
		// Identical shape: the same keys at every level and the same values
		// apart from what identifies the charge.
		if got, want := shapeOf(t, r2.Body), shapeOf(t, r1.Body); got != want {
			t.Errorf("/v1/pix/charges shape\n%s\nwant (/v1/charges)\n%s", got, want)
		}
		if got, want := withoutIdentity(t, r2.Body), withoutIdentity(t, r1.Body); got != want {
			t.Errorf("/v1/pix/charges body\n%s\nwant (/v1/charges)\n%s", got, want)
		}
		for _, c := range []charge{c1, c2} {
			if c.Object != "charge" || c.Status != "pending" || c.Amount != 12345 || c.Currency != "BRL" || c.PaymentMethod != "pix" {
				t.Errorf("created charge %+v", c)
			}
			if !strings.HasPrefix(c.ID, "ch_") || c.Pix == nil || c.Pix.BRCode == "" || len(c.Settlement) != 0 {
				t.Errorf("created charge id %q pix %+v settlement %v", c.ID, c.Pix, c.Settlement)
			}
			if c.Metadata["description"] != "Pedido 42" {
				t.Errorf("metadata.description %v, want the description", c.Metadata["description"])
			}
		}
		if !bytes.Contains(r1.Body, []byte(`"order":123456789012345678`)) {
			t.Errorf("metadata number not returned as sent: %s", r1.Body)
		}

		// Read by ch_ id and by raw id (and the tx_ form docs/design.md allows):
		// the same charge as created.
		for _, id := range []string{c1.ID, c1.raw(), "tx_" + c1.raw()} {
			g := a.test.get(t, id).want(t, http.StatusOK)
			if got, want := canonical(t, g.Body), canonical(t, r1.Body); got != want {
				t.Errorf("GET %s\n%s\nwant the create body\n%s", id, got, want)
			}
		}

		// Pay in test mode, then read it paid.
		p := a.test.pay(t, c1.ID, nil).want(t, http.StatusOK).charge(t)
		if p.Status != "paid" {
			t.Fatalf("pay: status %q, want paid", p.Status)
		}
		assertEndToEndID(t, p.Settlement["end_to_end_id"])
		for _, id := range []string{c1.ID, c1.raw()} {
			g := a.test.get(t, id).want(t, http.StatusOK)
			gc := g.charge(t)
			if gc.Status != "paid" || gc.Settlement["end_to_end_id"] != p.Settlement["end_to_end_id"] {
				t.Errorf("GET %s after pay: status %q settlement %v, want paid with %s", id, gc.Status, gc.Settlement, p.Settlement["end_to_end_id"])
			}
			if !bytes.Contains(g.Body, []byte(`"order":123456789012345678`)) {
				t.Errorf("metadata number changed after a round trip through the database: %s", g.Body)
			}
		}
		// A paid charge cannot be paid again, and the other charge is untouched.
		a.test.pay(t, c1.ID, nil).apiErr(t, http.StatusConflict, "charge_not_pending", "")
		if s := a.test.get(t, c2.ID).want(t, http.StatusOK).charge(t).Status; s != "pending" {
			t.Errorf("other charge status %q, want pending", s)
		}
	})
}

// shapeOf renders the key structure of a JSON document (keys and value
// kinds, not values).
func shapeOf(t *testing.T, body []byte) string {
	t.Helper()
	var v any
	if err := json.Unmarshal(body, &v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	var sb strings.Builder
	var walk func(prefix string, v any)
	walk = func(prefix string, v any) {
		switch x := v.(type) {
		case map[string]any:
			for _, k := range sortedKeys(x) {
				sb.WriteString(prefix + k + "\n")
				if prefix == "" && k == "metadata" {
					continue
				}
				walk(prefix+k+".", x[k])
			}
		}
	}
	walk("", v)
	return sb.String()
}

// withoutIdentity drops the fields that name one charge (ids, links,
// codes, times) and renders the rest canonically.
func withoutIdentity(t *testing.T, body []byte) string {
	t.Helper()
	var m map[string]any
	if err := json.Unmarshal(body, &m); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	delete(m, "id")
	delete(m, "checkout_url")
	delete(m, "created_at")
	if p, ok := m["pix"].(map[string]any); ok {
		for _, k := range []string{"br_code", "qr_code_url", "txid", "expires_at"} {
			delete(p, k)
		}
	}
	out, _ := json.Marshal(m)
	return string(out)
}

// canonical re-encodes a JSON document with sorted keys.
func canonical(t *testing.T, body []byte) string {
	t.Helper()
	var v any
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("decode %s: %v", body, err)
	}
	out, _ := json.Marshal(v)
	return string(out)
}
