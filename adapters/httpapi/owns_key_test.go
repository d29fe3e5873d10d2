package httpapi_test

import (
	"net/http"
	"slices"
	"testing"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/internal/testkit"
)

// The routes that keep their own Idempotency-Key — the money writes (a
// batch of charges among them), exactly once by the database, and logout —
// are marked where they are registered, and they are the only ones: every
// other authenticated POST goes through the keyed-writes middleware.
func TestOnlyTheMoneyWritesAndLogoutOwnTheirKey(t *testing.T) {
	t.Parallel()
	srv := newEnv(t).server(nil)
	// One request, so the env's log checks have something to read.
	if resp, err := testkit.Send(http.DefaultClient, http.MethodGet, srv.URL+"/v1/charges", nil, nil); err != nil || resp.Status != 401 {
		t.Fatalf("unauthenticated list: %v %+v", err, resp)
	}
	router, ok := srv.App.Handler.(*mux.Router)
	if !ok {
		t.Fatalf("handler is %T, not *mux.Router", srv.App.Handler)
	}
	var owners []string
	posts := 0
	err := router.Walk(func(rt *mux.Route, _ *mux.Router, _ []*mux.Route) error {
		methods, _ := rt.GetMethods()
		if !slices.Contains(methods, http.MethodPost) {
			return nil
		}
		posts++
		if httpapi.OwnsKeyRoute(rt) {
			owners = append(owners, rt.GetName())
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	slices.Sort(owners)
	want := []string{"auth.logout", "charges.batch_create", "charges.create", "payments.create", "payments.refund", "payouts.create",
		"pix_charges.create", "subscriptions.create", "transfers.create"}
	if !slices.Equal(owners, want) || posts <= len(want) {
		t.Fatalf("routes owning their key %v (of %d POST routes), want %v", owners, posts, want)
	}
}
