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
		{http.MethodPost, "/charges/ch_aaaaaaaaaaaaaaaaaaaaaaaaaa"},
	} {
		c.do(t, tc.method, tc.path, nil, nil).apiErr(t, http.StatusMethodNotAllowed, "method_not_allowed", "")
	}
	c.do(t, http.MethodGet, "/no-such-route", nil, nil).apiErr(t, http.StatusNotFound, "route_not_found", "")
}
