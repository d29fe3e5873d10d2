package e2e_test

import (
	"net/http"
	"net/url"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// Listing: cursor pagination newest first, every filter, and the 400s.
func TestListCharges(t *testing.T) {
	t.Parallel()
	eachBackend(t, func(t *testing.T, b backend) {
		e := newEnv(t, b) // its own server: the test moves the clock
		a := e.newAccount(t, "Loja Lista")

		// 27 charges one second apart (more than the default page of 25):
		// customers alternate between two documents and a few have none.
		const n = 27
		docs := []string{"529.982.247-25", "11144477735", ""}
		created := make([]charge, n) // oldest first
		for i := range n {
			body := pixBody(int64(100 + i))
			if d := docs[i%3]; d != "" {
				body["customer"] = map[string]any{"name": "Cliente", "document": d}
			}
			created[i] = a.test.mustCreate(t, body)
			e.clock.Advance(time.Second)
		}
		newestFirst := make([]string, n)
		for i, c := range created {
			newestFirst[n-1-i] = c.ID
		}
		// Noise that must never show: another account and the live mode.
		e.newAccount(t, "Loja Ruido").test.mustCreate(t, pixBody(1))
		a.live.mustCreate(t, pixBody(2))

		t.Run("default page", func(t *testing.T) {
			l := a.test.list(t, "")
			if l.Object != "list" || len(l.Data) != 25 || !l.HasMore || l.NextCursor == nil || *l.NextCursor != newestFirst[24] {
				t.Fatalf("default list: object %q, %d items, has_more %v, next_cursor %v", l.Object, len(l.Data), l.HasMore, l.NextCursor)
			}
			for i, c := range l.Data {
				if c.ID != newestFirst[i] {
					t.Fatalf("item %d is %s, want %s (newest first)", i, c.ID, newestFirst[i])
				}
			}
			rest := a.test.list(t, "?starting_after="+*l.NextCursor)
			if len(rest.Data) != 2 || rest.HasMore || rest.NextCursor != nil ||
				rest.Data[0].ID != newestFirst[25] || rest.Data[1].ID != newestFirst[26] {
				t.Errorf("second page: %d items, has_more %v, next_cursor %v", len(rest.Data), rest.HasMore, rest.NextCursor)
			}
		})

		t.Run("cursor pages", func(t *testing.T) {
			for _, limit := range []int{1, 2, 4, 10, 26, 27, 100} {
				ids, pages := a.test.listAll(t, "", limit)
				if !slices.Equal(ids, newestFirst) {
					t.Errorf("limit %d: pages gave %d ids (newest first, each once) = %v, want %v", limit, len(ids), ids, newestFirst)
				}
				if want := (n + limit - 1) / limit; pages != want {
					t.Errorf("limit %d: %d pages, want %d", limit, pages, want)
				}
			}
			// A raw id works as a cursor too.
			l := a.test.list(t, "?limit=2&starting_after="+strings.TrimPrefix(newestFirst[0], "ch_"))
			if len(l.Data) != 2 || l.Data[0].ID != newestFirst[1] {
				t.Errorf("raw cursor: %v", l.Data)
			}
		})

		// Pay some, expire one: status filter in the public vocabulary.
		paid := []string{created[3].ID, created[10].ID, created[20].ID}
		for _, id := range paid {
			a.test.pay(t, id, nil).want(t, http.StatusOK)
		}
		a.test.do(t, http.MethodPost, "/test_helpers/charges/"+created[5].ID+"/expire", nil, nil).want(t, http.StatusOK)

		t.Run("status", func(t *testing.T) {
			got, _ := a.test.listAll(t, "?status=paid", 2)
			if want := []string{paid[2], paid[1], paid[0]}; !slices.Equal(got, want) {
				t.Errorf("status=paid: %v, want %v", got, want)
			}
			got, _ = a.test.listAll(t, "?status=expired", 25)
			if !slices.Equal(got, []string{created[5].ID}) {
				t.Errorf("status=expired: %v", got)
			}
			got, _ = a.test.listAll(t, "?status=pending", 5)
			if len(got) != n-4 || slices.Contains(got, paid[0]) || slices.Contains(got, created[5].ID) {
				t.Errorf("status=pending: %d ids %v", len(got), got)
			}
			for _, c := range a.test.list(t, "?status=pending&limit=100").Data {
				if c.Status != "pending" {
					t.Errorf("status=pending listed %s as %q", c.ID, c.Status)
				}
			}
			if l := a.test.list(t, "?status=refunded"); len(l.Data) != 0 || l.HasMore {
				t.Errorf("status=refunded: %d items", len(l.Data))
			}
		})

		t.Run("created range is inclusive", func(t *testing.T) {
			// Bounds are the created_at values the API itself shows.
			from, to := created[4], created[8]
			q := "?created_after=" + url.QueryEscape(from.CreatedAt.Format(domain.TimestampLayout)) +
				"&created_before=" + url.QueryEscape(to.CreatedAt.Format(domain.TimestampLayout))
			got, _ := a.test.listAll(t, q, 2)
			want := []string{created[8].ID, created[7].ID, created[6].ID, created[5].ID, created[4].ID}
			if !slices.Equal(got, want) {
				t.Errorf("%s: %v, want %v", q, got, want)
			}
			// One bound alone, and the same instant as both bounds.
			q = "?created_after=" + url.QueryEscape(created[24].CreatedAt.Format(time.RFC3339Nano))
			if got, _ := a.test.listAll(t, q, 25); !slices.Equal(got, newestFirst[:3]) {
				t.Errorf("%s: %v, want %v", q, got, newestFirst[:3])
			}
			q = "?created_before=" + url.QueryEscape(created[1].CreatedAt.Format(domain.TimestampLayout))
			if got, _ := a.test.listAll(t, q, 25); !slices.Equal(got, newestFirst[n-2:]) {
				t.Errorf("%s: %v, want %v", q, got, newestFirst[n-2:])
			}
			at := url.QueryEscape(created[13].CreatedAt.Format(domain.TimestampLayout))
			if got, _ := a.test.listAll(t, "?created_after="+at+"&created_before="+at, 25); !slices.Equal(got, []string{created[13].ID}) {
				t.Errorf("same instant as both bounds: %v, want %s", got, created[13].ID)
			}
			// A time zone offset is the same instant.
			sp := created[13].CreatedAt.In(time.FixedZone("BRT", -3*3600)).Format("2006-01-02T15:04:05.000-07:00")
			if got, _ := a.test.listAll(t, "?created_after="+url.QueryEscape(sp)+"&created_before="+url.QueryEscape(sp), 25); !slices.Equal(got, []string{created[13].ID}) {
				t.Errorf("offset bounds %s: %v", sp, got)
			}
		})

		t.Run("customer_id", func(t *testing.T) {
			var want []string
			for i := n - 1; i >= 0; i-- {
				if i%3 == 0 {
					want = append(want, created[i].ID)
				}
			}
			for _, q := range []string{"52998224725", "529.982.247-25"} {
				got, _ := a.test.listAll(t, "?customer_id="+url.QueryEscape(q), 4)
				if !slices.Equal(got, want) {
					t.Errorf("customer_id=%s: %v, want %v", q, got, want)
				}
			}
			got, _ := a.test.listAll(t, "?customer_id=11144477735&status=paid", 25)
			if !slices.Equal(got, []string{created[10].ID}) {
				t.Errorf("customer_id + status: %v, want %s", got, created[10].ID)
			}
			if l := a.test.list(t, "?customer_id=00000000191"); len(l.Data) != 0 {
				t.Errorf("unknown customer_id listed %d", len(l.Data))
			}
			if l := a.test.list(t, "?customer_id="+url.QueryEscape("./-")); len(l.Data) != 0 {
				t.Errorf("customer_id of punctuation listed %d charges without a document", len(l.Data))
			}
		})

		t.Run("bad parameters", func(t *testing.T) {
			unknown := "ch_" + strings.Repeat("a", len(created[0].raw()))
			cases := []struct{ query, param string }{
				{"limit=0", "limit"},
				{"limit=101", "limit"},
				{"limit=-1", "limit"},
				{"limit=ten", "limit"},
				{"limit=2.5", "limit"},
				{"page=2", "page"},
				{"page=1&limit=10", "page"},
				{"offset=0", "offset"},
				{"offset=25", "offset"},
				{"starting_after=nope", "starting_after"},
				{"starting_after=" + unknown, "starting_after"},
				{"status=PAID", "status"},
				{"status=WAITING_PAYMENT", "status"},
				{"status=bogus", "status"},
				{"created_after=yesterday", "created_after"},
				{"created_before=2026-13-01T00:00:00Z", "created_before"},
			}
			for _, tc := range cases {
				t.Run(tc.query, func(t *testing.T) {
					a.test.do(t, http.MethodGet, "/charges?"+tc.query, nil, nil).apiErr(t, http.StatusBadRequest, "", tc.param)
				})
			}
			// limit 1 and 100 are the bounds, and they are accepted.
			a.test.list(t, "?limit=1")
			a.test.list(t, "?limit=100")
		})
	})
}
