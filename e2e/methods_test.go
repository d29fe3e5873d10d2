package e2e_test

import (
	"net/http"
	"testing"
)

// A known path with a method it does not serve answers 405 in the
// envelope; an unknown path answers 404.
func TestWrongMethodAndUnknownRoute(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends[1])
	acct := e.newAccount(t, "Loja")
	c := e.client(acct.TestKey)
	for _, tc := range []struct{ method, path string }{
		{http.MethodPut, "/charges"},
		{http.MethodDelete, "/charges"},
		{http.MethodPatch, "/pix/charges"},
		{http.MethodPut, "/charges/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa"},
	} {
		c.do(t, tc.method, tc.path, nil, nil).apiErr(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
	}
	c.do(t, http.MethodGet, "/no-such-route", nil, nil).apiErr(t, http.StatusNotFound, "route_not_found", "")
}

// Text no database can store or compare is refused up front, on both
// backends, instead of failing in the store as a 500.
func TestUnstorableTextInPathAndQuery(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		c := e.client(e.newAccount(t, "Loja").TestKey)
		for _, path := range []string{
			"/charges?customer_id=%00",
			"/charges?customer_id=%ff%fe",
			"/webhooks/deliveries?endpointId=we_%00",
			"/webhooks/endpoints/we_%00",
			"/payments?status=%00",
		} {
			r := c.do(t, http.MethodGet, path, nil, nil)
			if r.Status >= 500 {
				t.Errorf("GET %s → %d %s", path, r.Status, r.Body)
			}
		}
		c.do(t, http.MethodGet, "/charges?customer_id=%00", nil, nil).apiErr(t, http.StatusBadRequest, "parameter_invalid", "")
	})
}

// An Idempotency-Key header of bytes that are not UTF-8 is refused as
// invalid rather than reaching the store.
func TestIdempotencyKeyBytes(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		c := e.client(e.newAccount(t, "Loja").TestKey)
		r := c.do(t, http.MethodPost, "/charges", `{"amount":100,"payment_method":"pix"}`, hdr{"Idempotency-Key": "key-\xff\xfe-0001"})
		r.apiErr(t, http.StatusBadRequest, "idempotency_key_invalid", "Idempotency-Key")
	})
}
