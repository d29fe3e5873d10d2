package dashboard_test

import (
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/quitatest"
)

// payerCPF is the subscriptions' payer document: no dashboard page may
// show it in clear, formatted or bare.
const payerCPF = "529.982.247-25"

var payerCPFForms = []string{payerCPF, "52998224725", "529982247"}

type apiSubscription struct {
	ID          string `json:"id"`
	Status      string `json:"status"`
	CancelledBy string `json:"cancelled_by"`
	Pix         *struct {
		BRCode string `json:"br_code"`
	} `json:"pix"`
	LatestCycle *struct {
		Cycle  int    `json:"cycle"`
		Charge string `json:"charge"`
		Status string `json:"status"`
	} `json:"latest_cycle"`
	Cycles struct {
		Paid   int `json:"paid"`
		Failed int `json:"failed"`
	} `json:"cycles"`
}

// subTerms is a subscription's create body: Maria Silva's monthly R$ 49,90
// by an authorisation request, starting in five days; edit it for others.
func subTerms(name string) map[string]any {
	start := domain.BrasiliaDate(time.Now()).AddDays(5)
	return map[string]any{
		"customer": map[string]any{"name": name, "document": payerCPF},
		"amount":   4990, "interval": "monthly", "start_date": start.String(),
		"contract": "CTR-2027-001", "description": "Plano mensal", "retry_policy": "three_in_seven_days",
		"journey": "authorization_request",
	}
}

// subAPI calls a subscription route of the API with key and decodes the
// subscription it answers.
func subAPI(t testing.TB, srv *quitatest.Server, method, path, key string, body any, want int) apiSubscription {
	t.Helper()
	return apiAs[apiSubscription](t, srv, method, path, key, body, want)
}

func createSub(t testing.TB, srv *quitatest.Server, key string, body map[string]any) apiSubscription {
	t.Helper()
	return subAPI(t, srv, http.MethodPost, "/subscriptions", key, body, http.StatusCreated)
}

// activeSub is a subscription authorised by the sandbox's payer with its
// first n cycles debited and paid.
func activeSub(t testing.TB, srv *quitatest.Server, key string, body map[string]any, n int) apiSubscription {
	t.Helper()
	s := createSub(t, srv, key, body)
	s = subAPI(t, srv, http.MethodPost, "/test_helpers/subscriptions/"+s.ID+"/authorize", key, nil, http.StatusOK)
	for range n {
		s = subAPI(t, srv, http.MethodPost, "/test_helpers/subscriptions/"+s.ID+"/advance", key, nil, http.StatusOK)
	}
	return s
}

// noDocument fails when page shows the payer's document in clear.
func noDocument(t testing.TB, what, page string) {
	t.Helper()
	for _, d := range payerCPFForms {
		if strings.Contains(page, d) {
			t.Errorf("%s shows the payer's document (%s)", what, d)
		}
	}
}

// rowsOf counts the subscriptions a list page shows.
func rowsOf(page string) int { return strings.Count(page, `<tr data-sub="`) }

// inEnglish switches b's pages to English.
func (b *browser) inEnglish() {
	b.t.Helper()
	if res := b.get("/dashboard/lang/en?next=/dashboard/"); res.Status != http.StatusSeeOther {
		b.t.Fatalf("switch to English: %d", res.Status)
	}
}
