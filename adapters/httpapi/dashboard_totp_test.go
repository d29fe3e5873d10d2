package httpapi_test

import (
	"context"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/totp"
	"github.com/quitapix/quita/quitatest"
)

// A login with TOTP through the API is one step: the password alone is
// 401 second_factor_required, a wrong or reused code 401
// invalid_second_factor; a right code or a recovery code (once) logs in.
// A live key (issued or rotated) needs a fresh code: 403
// second_factor_required / invalid_second_factor without one; a test key
// needs none.
func TestDashboardAPIWithTOTP(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	clock := quitatest.NewClock()
	srv := e.server(clock)
	m := e.account(srv, "Loja TOTP API")
	ctx := context.Background()
	tok := e.login(srv, m)
	u, err := srv.App.Dashboard.Sessions.Verify(ctx, tok)
	if err != nil {
		t.Fatal(err)
	}
	setup, err := srv.App.Dashboard.SecondFactor.BeginTOTP(ctx, u)
	if err != nil {
		t.Fatal(err)
	}
	e.secret(setup.Secret)
	code := func() string {
		t.Helper()
		clock.Advance(30 * time.Second)
		c, err := totp.Codes{}.TOTPCode(setup.Secret, clock.Now().Unix()/30)
		if err != nil {
			t.Fatal(err)
		}
		return c
	}
	recovery, err := srv.App.Dashboard.SecondFactor.ConfirmTOTP(ctx, u, code())
	if err != nil {
		t.Fatal(err)
	}
	e.secret(recovery...)

	login := func(c string) resp {
		t.Helper()
		body := `{"email":"` + m.Email + `","password":"` + password + `"`
		if c != "" {
			body += `,"code":"` + c + `"`
		}
		return call(t, http.MethodPost, srv.BaseURL+"/auth/login", nil, body+"}")
	}
	r := login("")
	expectError(t, r, 401, "authentication_error", "second_factor_required")
	if p := r.Error().Param; p != "code" {
		t.Errorf("param %q", p)
	}
	expectError(t, login("000000"), 401, "authentication_error", "invalid_second_factor")
	c := code()
	r = login(c)
	if r.Status != 200 {
		t.Fatalf("login with the code: %d %s", r.Status, r.Body)
	}
	fresh, _ := r.json(t)["token"].(string)
	e.secret(fresh)
	expectError(t, login(c), 401, "authentication_error", "invalid_second_factor")
	if r := login(strings.ReplaceAll(recovery[0], "-", "")); r.Status != 200 {
		t.Fatalf("login with a recovery code: %d %s", r.Status, r.Body)
	} else {
		tk, _ := r.json(t)["token"].(string)
		e.secret(tk)
	}
	expectError(t, login(recovery[0]), 401, "authentication_error", "invalid_second_factor")

	keys := func(body string) resp {
		t.Helper()
		r := call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(fresh), body)
		e.secretsIn(r.Body)
		return r
	}
	if r := keys(`{"label":"teste","test":true}`); r.Status != 201 {
		t.Fatalf("a test key: %d %s", r.Status, r.Body)
	}
	expectError(t, keys(`{"label":"real"}`), 403, "permission_error", "second_factor_required")
	expectError(t, keys(`{"label":"real","code":"000000"}`), 403, "permission_error", "invalid_second_factor")
	r = keys(`{"label":"real","code":"` + code() + `"}`)
	if r.Status != 201 || !strings.HasPrefix(r.json(t)["apiKey"].(string), "qt_live_") {
		t.Fatalf("a live key with a code: %d %s", r.Status, r.Body)
	}
	id := r.json(t)["id"].(string)
	rotate := func(body string) resp {
		t.Helper()
		r := call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+id+"/rotate", bearerHdr(fresh), body)
		e.secretsIn(r.Body)
		return r
	}
	expectError(t, rotate(``), 403, "permission_error", "second_factor_required")
	if r := rotate(`{"code":"` + code() + `"}`); r.Status != 201 {
		t.Fatalf("rotate with a code: %d %s", r.Status, r.Body)
	}
	expectError(t, keys(`{"label":"real","code":7}`), 400, "invalid_request_error", "")
}
