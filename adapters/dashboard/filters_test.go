package dashboard_test

import (
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// A charges filter day whose bound falls outside the instants a store
// keeps (years 0001–9999 UTC; to=9999-12-31 ends in year 10000 UTC, since
// days are São Paulo days) is shown as an invalid filter, like a malformed
// one, and the list is answered without it; it never reaches the store.
func TestChargeFilterDaysOutOfRange(t *testing.T) {
	t.Parallel()
	for _, db := range []struct {
		name string
		dsn  func(testing.TB) string
	}{{"sqlite", testenv.SQLiteDSN}, {"postgres", testenv.PostgresDSN}} {
		t.Run(db.name, func(t *testing.T) {
			t.Parallel()
			srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: db.dsn(t)})
			m := newMerchant(t, srv, "Padaria São João")
			ch := paidCharge(t, srv, m.TestKey, 1500)
			b := newBrowser(t, srv)
			b.login(m)
			const invalid = "Filtro inválido ignorado."
			for _, c := range []struct {
				query   string
				invalid bool
			}{
				{"to=9999-12-31", true},
				{"from=0000-12-31", true},
				{"from=0000-01-01&to=9999-12-31", true},
				{"to=9999-12-30", false},
				{"from=0001-01-02", false},
				{"from=2000-01-01&to=9999-12-30", false},
			} {
				res := b.get("/dashboard/test/charges?" + c.query)
				if res.Status != http.StatusOK {
					t.Errorf("%s: %d\n%.1500s", c.query, res.Status, res.Body)
					continue
				}
				if got := strings.Contains(res.Body, invalid); got != c.invalid {
					t.Errorf("%s: invalid-filter notice shown %v, want %v", c.query, got, c.invalid)
				}
				// The filters that stand, and those dropped, keep the charge listed.
				if !strings.Contains(res.Body, ch.ID) {
					t.Errorf("%s: the charge %s is not listed", c.query, ch.ID)
				}
			}
		})
	}
}
