package bcbpix_test

import (
	"encoding/json"
	"net/http"
	"testing"
	"time"
)

// Until the adapter opens cobv, it does not declare ports.DueDateSupport:
// a live due-date create is refused with 422 due_date_not_supported naming
// due_date, and the PSP is never called. The same request with the test
// key (the sandbox, which supports them) is created.
func TestLiveDueDateChargeIsRefusedBeforeThePSP(t *testing.T) {
	t.Parallel()
	w := newWorld(t, backends[0].dsn(t))
	body := map[string]any{"amount": 10000, "payment_method": "pix",
		"customer": map[string]any{"name": "Joao Souza", "document": expectedDoc},
		"due_date": time.Now().AddDate(0, 0, 10).Format(time.DateOnly)}
	_, before := w.sim.Hits()
	code, raw := w.do(t, w.acct.LiveKey, http.MethodPost, "/charges", body, newIdem())
	var e struct {
		Error struct{ Code, Param, Message string } `json:"error"`
	}
	_ = json.Unmarshal(raw, &e)
	if code != http.StatusUnprocessableEntity || e.Error.Code != "due_date_not_supported" || e.Error.Param != "due_date" {
		t.Fatalf("live due-date create: %d %s", code, raw)
	}
	if _, after := w.sim.Hits(); after != before {
		t.Errorf("the PSP was called %d times for a refused due-date charge", after-before)
	}
	if code, raw := w.do(t, w.acct.TestKey, http.MethodPost, "/charges", body, newIdem()); code != http.StatusCreated {
		t.Errorf("test-mode due-date create: %d %s", code, raw)
	}
}
