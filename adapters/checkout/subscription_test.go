package checkout_test

import (
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/quitatest"
)

// A QR-journey subscription's hosted page shows what the mandate
// authorises and the code to scan while pending, in Portuguese or English,
// never the payer's document; once authorised it says so and shows no
// code. An authorization_request subscription, which has no code, and an
// unknown id have no page.
func TestSubscriptionPage(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	key := srv.NewAccount(t, "Academia Saúde").TestKey
	brasilia := time.FixedZone("BRT", -3*3600)
	start := time.Now().In(brasilia).AddDate(0, 0, 5).Format(time.DateOnly)
	create := func(journey string) map[string]any {
		var out map[string]any
		body := map[string]any{"customer": map[string]any{"name": "Maria Silva", "document": "529.982.247-25"},
			"amount": 12990, "interval": "monthly", "start_date": start, "contract": "PLANO-77", "description": "Plano anual",
			"journey": journey}
		doJSON(t, http.MethodPost, srv.BaseURL+"/subscriptions", key, body, &out, http.StatusCreated,
			"Idempotency-Key", fmt.Sprintf("checkout-sub-%08d", idemSeq.Add(1)))
		return out
	}
	sub := create("qr_code")
	hosted, _ := sub["hosted_url"].(string)
	code := sub["pix"].(map[string]any)["br_code"].(string)
	r, page := fetch(t, hosted, "Accept-Language", "pt-BR")
	if r.Status != 200 || !strings.Contains(page, "R$ 129,90 por mês") || !strings.Contains(page, "PLANO-77") ||
		!strings.Contains(page, code) || !strings.Contains(page, `/qr.png"`) || !strings.Contains(page, "Academia Saúde") ||
		strings.Contains(page, "529.982.247-25") || strings.Contains(page, "52998224725") {
		t.Fatalf("pending page %d:\n%s", r.Status, page)
	}
	if r.Header.Get("Content-Security-Policy") == "" || r.Header.Get("Cache-Control") != "no-store" {
		t.Errorf("headers %v", r.Header)
	}
	if _, en := fetch(t, hosted+"?lang=en"); !strings.Contains(en, "a month") || !strings.Contains(en, "Authorize") {
		t.Errorf("English page:\n%s", en)
	}
	doJSON(t, http.MethodPost, srv.BaseURL+"/test_helpers/subscriptions/"+sub["id"].(string)+"/authorize", key, nil, nil, http.StatusOK)
	if _, done := fetch(t, hosted, "Accept-Language", "pt-BR"); !strings.Contains(done, "Autorizado") || strings.Contains(done, code) {
		t.Errorf("authorised page:\n%s", done)
	}
	other := create("authorization_request")
	base := strings.TrimSuffix(hosted, strings.TrimPrefix(sub["id"].(string), "sub_"))
	if r, _ := fetch(t, base+strings.TrimPrefix(other["id"].(string), "sub_")); r.Status != http.StatusNotFound {
		t.Errorf("an authorization_request subscription has a page: %d", r.Status)
	}
	if r, _ := fetch(t, base+strings.Repeat("a", 35)); r.Status != http.StatusNotFound {
		t.Errorf("an unknown id: %d", r.Status)
	}
}
