package httpapi_test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

type issued struct {
	ID, APIKey, Fingerprint, Prefix, Label string
	CreatedAt                              time.Time
}

func decodeIssued(t *testing.T, r resp) issued {
	t.Helper()
	if r.Status != http.StatusCreated {
		t.Fatalf("issue/rotate: %d %s", r.Status, r.Body)
	}
	var k issued
	if err := json.Unmarshal(r.Body, &k); err != nil {
		t.Fatal(err)
	}
	return k
}

// authenticated reports whether the key is accepted (any answer but 401).
func authenticated(t *testing.T, base, key string) bool {
	t.Helper()
	r := call(t, http.MethodGet, base+"/charges/ch_doesnotexist00000000000", keyHdr(key), "")
	return r.Status != http.StatusUnauthorized
}

func TestAPIKeyLifecycle(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	other := e.server(nil) // a second quitad process on the same database
	a := e.account(srv, "Loja A")
	b := e.account(srv, "Loja B")
	tokA, tokB := e.login(srv, a), e.login(other, b)

	// Issue.
	r := call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"label":"backend","test":true}`)
	k := decodeIssued(t, r)
	e.secret(k.APIKey)
	mode, err := domain.ParseAPIKey(k.APIKey)
	if err != nil || mode != domain.ModeTest || !strings.HasPrefix(k.APIKey, "qt_test_") || len(k.APIKey) != 40 {
		t.Fatalf("issued key %q: mode %v %v", k.APIKey[:8], mode, err)
	}
	if k.Fingerprint != domain.APIKeyFingerprint(k.APIKey) || k.Prefix != k.APIKey[:12] || k.Label != "backend" ||
		!strings.HasPrefix(k.ID, "key_") || k.CreatedAt.IsZero() {
		t.Fatalf("issued record %+v", k)
	}
	live := decodeIssued(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), ""))
	e.secret(live.APIKey)
	if !strings.HasPrefix(live.APIKey, "qt_live_") || live.Label != "" {
		t.Fatalf("default issue: %q %q", live.APIKey[:8], live.Label)
	}
	if !authenticated(t, other.BaseURL, k.APIKey) || !authenticated(t, srv.BaseURL, live.APIKey) {
		t.Fatal("new keys refused")
	}

	// List: metadata only, this account only.
	r = call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(tokA), "")
	if r.Status != 200 {
		t.Fatalf("list: %d %s", r.Status, r.Body)
	}
	var list struct{ Data []map[string]any }
	_ = json.Unmarshal(r.Body, &list)
	if len(list.Data) != 4 { // two from account creation, two issued
		t.Fatalf("list has %d keys: %s", len(list.Data), r.Body)
	}
	for _, item := range list.Data {
		keys := slices.Sorted(func(yield func(string) bool) {
			for k := range item {
				if !yield(k) {
					return
				}
			}
		})
		if !slices.Equal(keys, []string{"createdAt", "id", "label", "prefix"}) {
			t.Fatalf("list item fields %v", keys)
		}
	}
	if bytes.Contains(r.Body, []byte(k.APIKey)) || bytes.Contains(r.Body, []byte(k.Fingerprint)) {
		t.Fatal("list leaks a key or fingerprint")
	}
	r = call(t, http.MethodGet, srv.BaseURL+"/api-keys", bearerHdr(tokB), "")
	if bytes.Contains(r.Body, []byte(k.ID)) {
		t.Fatal("account B lists account A's key")
	}

	// Rotate: the old key is refused at once on the other process.
	r = call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k.ID+"/rotate", bearerHdr(tokA), `{"label":"rotated"}`)
	k2 := decodeIssued(t, r)
	e.secret(k2.APIKey)
	if k2.ID == k.ID || k2.APIKey == k.APIKey || k2.Label != "rotated" || !strings.HasPrefix(k2.APIKey, "qt_test_") {
		t.Fatalf("rotated %+v", k2)
	}
	if authenticated(t, other.BaseURL, k.APIKey) {
		t.Fatal("rotated-away key still accepted on the second process")
	}
	if !authenticated(t, other.BaseURL, k2.APIKey) {
		t.Fatal("successor key refused")
	}
	// Rotate without a body keeps the label.
	k3 := decodeIssued(t, call(t, http.MethodPost, other.BaseURL+"/api-keys/"+k2.ID+"/rotate", bearerHdr(tokA), ""))
	e.secret(k3.APIKey)
	if k3.Label != "rotated" {
		t.Errorf("label after rotate without body: %q", k3.Label)
	}

	// Revoke: refused at once everywhere; permanent.
	r = call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+live.ID, bearerHdr(tokA), "")
	if r.Status != 200 || string(bytes.TrimSpace(r.Body)) != `{"revoked":true}` {
		t.Fatalf("revoke: %d %s", r.Status, r.Body)
	}
	if authenticated(t, other.BaseURL, live.APIKey) || authenticated(t, srv.BaseURL, live.APIKey) {
		t.Fatal("revoked key still accepted")
	}
	if r := call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+live.ID, bearerHdr(tokA), ""); r.Status != 200 {
		t.Errorf("revoke again: %d %s", r.Status, r.Body)
	}
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+live.ID+"/rotate", bearerHdr(tokA), ""), 409, "invalid_request_error", "api_key_revoked")

	// 4xx of the key routes.
	long := strings.Repeat("x", 65)
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"label":"`+long+`"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k3.ID+"/rotate", bearerHdr(tokA), `{"label":"`+long+`"}`), 400, "invalid_request_error", "parameter_invalid")
	// A label is shown in the dashboard: no control or bidirectional
	// formatting character.
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"label":"back\u202eend"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k3.ID+"/rotate", bearerHdr(tokA), `{"label":"a\nb"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"test":"yes"}`), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys", bearerHdr(tokA), `{"scope":"all"}`), 400, "invalid_request_error", "parameter_unknown")
	expectError(t, call(t, http.MethodDelete, srv.BaseURL+"/api-keys/key_nope", bearerHdr(tokA), ""), 404, "invalid_request_error", "resource_not_found")
	// mux answers an unknown method under a subrouter as an unknown route
	// (the same as PUT /v1/charges); either way it is refused.
	if r := call(t, http.MethodPut, srv.BaseURL+"/api-keys", bearerHdr(tokA), ""); r.Status != 404 && r.Status != 405 {
		t.Errorf("PUT /api-keys: %d", r.Status)
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/api-keys", nil, ""), 401, "authentication_error", "token_missing")
	// Account B cannot touch A's keys: 404, and the key keeps working.
	expectError(t, call(t, http.MethodDelete, srv.BaseURL+"/api-keys/"+k3.ID, bearerHdr(tokB), ""), 404, "invalid_request_error", "resource_not_found")
	expectError(t, call(t, http.MethodPost, srv.BaseURL+"/api-keys/"+k3.ID+"/rotate", bearerHdr(tokB), ""), 404, "invalid_request_error", "resource_not_found")
	if !authenticated(t, srv.BaseURL, k3.APIKey) {
		t.Fatal("B's attempt revoked A's key")
	}

	// The audit log: issue ×2, rotate ×2 (revoked + issued each), revoke.
	r = call(t, http.MethodGet, srv.BaseURL+"/audit-logs", bearerHdr(tokA), "")
	var audit struct {
		Data []struct{ Action, UserID, KeyID, KeyFingerprint string }
	}
	if err := json.Unmarshal(r.Body, &audit); err != nil || r.Status != 200 {
		t.Fatalf("audit: %d %s", r.Status, r.Body)
	}
	var got []string
	for _, a0 := range audit.Data {
		if a0.UserID != a.UserID || a0.KeyFingerprint == "" || a0.KeyID == "" {
			t.Errorf("audit entry %+v", a0)
		}
		got = append(got, a0.Action+":"+a0.KeyID)
	}
	for _, want := range []string{"api_key.issued:" + k.ID, "api_key.rotated:" + k.ID, "api_key.issued:" + k2.ID,
		"api_key.rotated:" + k2.ID, "api_key.issued:" + k3.ID, "api_key.revoked:" + live.ID} {
		if !slices.Contains(got, want) {
			t.Errorf("audit log lacks %s: %v", want, got)
		}
	}
	if len(got) != 7 {
		t.Errorf("audit log has %d entries, want 7: %v", len(got), got)
	}
	if strings.Contains(string(r.Body), k.APIKey) {
		t.Error("audit log holds a key cleartext")
	}
	r = call(t, http.MethodGet, srv.BaseURL+"/audit-logs", bearerHdr(tokB), "")
	if strings.Contains(string(r.Body), a.UserID) || strings.Contains(string(r.Body), k.ID) {
		t.Error("account B sees A's audit log")
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/audit-logs?limit=0", bearerHdr(tokA), ""), 400, "invalid_request_error", "parameter_invalid")
}

func TestRequestLogs(t *testing.T) {
	t.Parallel()
	e := newEnv(t)
	srv := e.server(nil)
	a := e.account(srv, "Loja Logs")
	b := e.account(srv, "Loja Outra")
	tok := e.login(srv, a)

	var ids []string
	for range 3 {
		r := call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(a.TestKey), "")
		ids = append(ids, r.Header.Get("X-Request-Id"))
	}
	call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(a.LiveKey), "")
	call(t, http.MethodGet, srv.BaseURL+"/charges/ch_missing000000000000000", keyHdr(b.TestKey), "")
	fp := domain.APIKeyFingerprint(a.TestKey)

	r := call(t, http.MethodGet, srv.BaseURL+"/request-logs?apiKeyFingerprint="+fp+"&limit=2", bearerHdr(tok), "")
	var logs struct {
		Data []struct {
			RequestID, Method, Path, APIKeyFingerprint, Mode string
			Status                                           int
			DurationMs                                       float64
			CreatedAt                                        time.Time
		}
	}
	if err := json.Unmarshal(r.Body, &logs); err != nil || r.Status != 200 {
		t.Fatalf("request logs: %d %s", r.Status, r.Body)
	}
	if len(logs.Data) != 2 {
		t.Fatalf("got %d entries, want 2 (limit): %s", len(logs.Data), r.Body)
	}
	for _, l := range logs.Data {
		if l.Method != "GET" || l.Path != "/v1/charges/{id}" || l.Status != 404 || l.APIKeyFingerprint != fp ||
			l.Mode != "test" || l.DurationMs <= 0 || l.CreatedAt.IsZero() || !slices.Contains(ids, l.RequestID) {
			t.Errorf("entry %+v", l)
		}
	}
	if logs.Data[0].RequestID != ids[2] {
		t.Errorf("newest first: got %s, want %s", logs.Data[0].RequestID, ids[2])
	}
	if strings.Contains(string(r.Body), "ch_missing") {
		t.Error("request logs hold a raw path")
	}
	// Unfiltered: both keys of A, none of B.
	r = call(t, http.MethodGet, srv.BaseURL+"/request-logs", bearerHdr(tok), "")
	_ = json.Unmarshal(r.Body, &logs)
	if len(logs.Data) != 4 {
		t.Errorf("unfiltered: %d entries, want 4", len(logs.Data))
	}
	if strings.Contains(string(r.Body), domain.APIKeyFingerprint(b.TestKey)) {
		t.Error("A sees B's requests")
	}
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs?limit=101", bearerHdr(tok), ""), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs?apiKeyFingerprint=abc", bearerHdr(tok), ""), 400, "invalid_request_error", "parameter_invalid")
	expectError(t, call(t, http.MethodGet, srv.BaseURL+"/request-logs", keyHdr(a.TestKey), ""), 403, "permission_error", "api_key_not_allowed")
}
