package e2e_test

import (
	"net/http"
	"testing"
)

// Another account's charge, and the other mode's, do not exist for the
// caller: 404 on read, on the test helpers and absent from lists.
func TestAccountAndModeIsolation(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b)
		a := e.newAccount(t, "Loja A")
		bb := e.newAccount(t, "Loja B")

		aTest := a.test.mustCreate(t, map[string]any{"amount": 1111, "payment_method": "pix",
			"customer": map[string]any{"name": "Ana", "document": "52998224725"}})
		aLive := a.live.mustCreate(t, map[string]any{"amount": 2222, "payment_method": "pix",
			"customer": map[string]any{"name": "Ana", "document": "52998224725"}})
		bTest := bb.test.mustCreate(t, pixBody(3333))

		// Reads: the owner (right mode) sees it; everyone else gets 404.
		cases := []struct {
			name   string
			caller *client
			id     string
			want   int
		}{
			{"A test reads A test", a.test, aTest.ID, http.StatusOK},
			{"A live reads A live", a.live, aLive.ID, http.StatusOK},
			{"A live reads A test", a.live, aTest.ID, http.StatusNotFound},
			{"A live reads A test raw", a.live, aTest.raw(), http.StatusNotFound},
			{"A test reads A live", a.test, aLive.ID, http.StatusNotFound},
			{"B test reads A test", bb.test, aTest.ID, http.StatusNotFound},
			{"B test reads A test raw", bb.test, aTest.raw(), http.StatusNotFound},
			{"B live reads A live", bb.live, aLive.ID, http.StatusNotFound},
			{"B live reads A test", bb.live, aTest.ID, http.StatusNotFound},
			{"A test reads B test", a.test, bTest.ID, http.StatusNotFound},
		}
		for _, tc := range cases {
			t.Run(tc.name, func(t *testing.T) {
				r := tc.caller.get(t, tc.id)
				if tc.want == http.StatusOK {
					if got := r.want(t, http.StatusOK).charge(t); got.ID != tc.id {
						t.Errorf("read %s got %s", tc.id, got.ID)
					}
					return
				}
				r.apiErr(t, http.StatusNotFound, "resource_not_found", "")
			})
		}

		// Test helpers: live keys never reach them, nor another account.
		helpers := []struct {
			name   string
			caller *client
			id     string
		}{
			{"live key on own live charge", a.live, aLive.ID},
			{"live key on own test charge", a.live, aTest.ID},
			{"other account's test key", bb.test, aTest.ID},
			{"test key on own live charge", a.test, aLive.ID},
		}
		for _, h := range helpers {
			for _, action := range []string{"pay", "expire"} {
				t.Run(h.name+" "+action, func(t *testing.T) {
					h.caller.do(t, http.MethodPost, "/test_helpers/charges/"+h.id+"/"+action, nil, nil).
						apiErr(t, http.StatusNotFound, "resource_not_found", "")
				})
			}
		}
		// Nothing above changed a charge.
		for _, c := range []struct {
			cl *client
			id string
		}{{a.test, aTest.ID}, {a.live, aLive.ID}, {bb.test, bTest.ID}} {
			if s := c.cl.get(t, c.id).want(t, http.StatusOK).charge(t).Status; s != "pending" {
				t.Errorf("%s is %q after refused helper calls", c.id, s)
			}
		}

		// Lists show only the caller's account and mode, also under filters.
		lists := []struct {
			name   string
			caller *client
			query  string
			want   []string
			// badCursor: another account's id is no cursor of this one.
			badCursor bool
		}{
			{"A test", a.test, "", []string{aTest.ID}, false},
			{"A live", a.live, "", []string{aLive.ID}, false},
			{"B test", bb.test, "", []string{bTest.ID}, false},
			{"B live", bb.live, "", nil, false},
			{"B test by A's customer", bb.test, "?customer_id=52998224725", nil, false},
			{"A live by customer", a.live, "?customer_id=529.982.247-25", []string{aLive.ID}, false},
			{"B test after A's cursor", bb.test, "?starting_after=" + aTest.ID, nil, true},
			{"A live after A test's cursor", a.live, "?starting_after=" + aTest.ID, nil, true},
		}
		for _, l := range lists {
			t.Run("list "+l.name, func(t *testing.T) {
				r := l.caller.do(t, http.MethodGet, "/charges"+l.query, nil, nil)
				if l.badCursor {
					r.apiErr(t, http.StatusBadRequest, "parameter_invalid", "starting_after")
					return
				}
				var got chargeList
				r.want(t, http.StatusOK).Decode(t, &got)
				ids := []string{}
				for _, c := range got.Data {
					ids = append(ids, c.ID)
				}
				if len(ids) != len(l.want) || (len(ids) > 0 && ids[0] != l.want[0]) {
					t.Errorf("list %s%s = %v, want %v", l.name, l.query, ids, l.want)
				}
			})
		}
	})
}
