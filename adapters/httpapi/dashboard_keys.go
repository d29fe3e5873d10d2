package httpapi

import (
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// APIKeysController serves /api-keys for the dashboard.
type APIKeysController struct {
	keys *app.KeyService
}

// Routes registers the key routes (under requireDashboard).
func (c *APIKeysController) Routes(r *mux.Router) {
	r.HandleFunc("/api-keys", handle(c.issue)).Methods(http.MethodPost).Name("api_keys.issue")
	r.HandleFunc("/api-keys", handle(c.list)).Methods(http.MethodGet).Name("api_keys.list")
	r.HandleFunc("/api-keys/{id}/rotate", handle(c.rotate)).Methods(http.MethodPost).Name("api_keys.rotate")
	r.HandleFunc("/api-keys/{id}", handle(c.revoke)).Methods(http.MethodDelete).Name("api_keys.revoke")
	r.HandleFunc("/audit-logs", handle(c.auditLogs)).Methods(http.MethodGet).Name("audit_logs.list")
	r.HandleFunc("/request-logs", handle(c.requestLogs)).Methods(http.MethodGet).Name("request_logs.list")
}

type issuedKeyJSON struct {
	ID          string           `json:"id"`
	APIKey      string           `json:"apiKey"`
	Fingerprint string           `json:"fingerprint"`
	Prefix      string           `json:"prefix"`
	Label       string           `json:"label"`
	CreatedAt   domain.Timestamp `json:"createdAt"`
}

func issuedJSON(k app.IssuedKey) issuedKeyJSON {
	return issuedKeyJSON{ID: k.ID, APIKey: k.APIKey, Fingerprint: k.Fingerprint, Prefix: k.Prefix, Label: k.Label, CreatedAt: domain.Timestamp(k.CreatedAt)}
}

// A live key asks a user with TOTP for a fresh code (code).
type issueKeyRequest struct {
	Label string `json:"label"`
	Test  bool   `json:"test"`
	Code  string `json:"code"`
}

type rotateKeyRequest struct {
	Label *string `json:"label"`
	Code  string  `json:"code"`
}

// optionalBody decodes a body that may be absent.
func optionalBody(w http.ResponseWriter, r *http.Request, v any) error {
	body, err := readBody(w, r, false)
	if err != nil {
		return err
	}
	if len(strings.TrimSpace(string(body))) == 0 {
		return nil
	}
	return decodeStrict(body, v)
}

func (c *APIKeysController) issue(w http.ResponseWriter, r *http.Request) (any, error) {
	var req issueKeyRequest
	if err := optionalBody(w, r, &req); err != nil {
		return nil, err
	}
	k, err := c.keys.Issue(r.Context(), dashboardUser(r.Context()), req.Label, req.Test, req.Code)
	if err != nil {
		return nil, err
	}
	return created(issuedJSON(k))
}

type keyMetaJSON struct {
	ID        string           `json:"id"`
	Prefix    string           `json:"prefix"`
	Label     string           `json:"label"`
	CreatedAt domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) list(w http.ResponseWriter, r *http.Request) (any, error) {
	ks, err := c.keys.List(r.Context(), dashboardUser(r.Context()))
	if err != nil {
		return nil, err
	}
	out := make([]keyMetaJSON, len(ks))
	for i, k := range ks {
		out[i] = keyMetaJSON{ID: k.ID, Prefix: k.Prefix, Label: k.Label, CreatedAt: domain.Timestamp(k.CreatedAt)}
	}
	return map[string]any{"data": out}, nil
}

func (c *APIKeysController) rotate(w http.ResponseWriter, r *http.Request) (any, error) {
	var req rotateKeyRequest
	if err := optionalBody(w, r, &req); err != nil {
		return nil, err
	}
	k, err := c.keys.Rotate(r.Context(), dashboardUser(r.Context()), mux.Vars(r)["id"], req.Label, req.Code)
	if err != nil {
		return nil, err
	}
	return created(issuedJSON(k))
}

func (c *APIKeysController) revoke(w http.ResponseWriter, r *http.Request) (any, error) {
	if err := c.keys.Revoke(r.Context(), dashboardUser(r.Context()), mux.Vars(r)["id"]); err != nil {
		return nil, err
	}
	return map[string]bool{"revoked": true}, nil
}

type auditJSON struct {
	ID             string           `json:"id"`
	Action         string           `json:"action"`
	UserID         string           `json:"userId,omitempty"`
	KeyID          string           `json:"keyId,omitempty"`
	KeyFingerprint string           `json:"keyFingerprint,omitempty"`
	Code           string           `json:"code,omitempty"`
	CreatedAt      domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) auditLogs(w http.ResponseWriter, r *http.Request) (any, error) {
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1, 100, 50)
	if err != nil {
		return nil, err
	}
	es, err := c.keys.AuditLogs(r.Context(), dashboardUser(r.Context()), limit)
	if err != nil {
		return nil, err
	}
	out := make([]auditJSON, len(es))
	for i, e := range es {
		out[i] = auditJSON{ID: e.ID, Action: e.Action, UserID: e.UserID, KeyID: e.KeyID, KeyFingerprint: e.KeyFingerprint,
			Code: e.Code, CreatedAt: domain.Timestamp(e.CreatedAt)}
	}
	return map[string]any{"data": out}, nil
}

type requestLogJSON struct {
	RequestID         string           `json:"requestId"`
	Method            string           `json:"method"`
	Path              string           `json:"path"`
	Status            int              `json:"status"`
	DurationMs        float64          `json:"durationMs"`
	APIKeyFingerprint string           `json:"apiKeyFingerprint"`
	Mode              string           `json:"mode"`
	CreatedAt         domain.Timestamp `json:"createdAt"`
}

func (c *APIKeysController) requestLogs(w http.ResponseWriter, r *http.Request) (any, error) {
	limit, err := intParam(r.URL.Query().Get("limit"), "limit", 1, 100, 25)
	if err != nil {
		return nil, err
	}
	fp := r.URL.Query().Get("apiKeyFingerprint")
	if fp != "" && !isHexSHA256(fp) {
		return nil, badRequest("apiKeyFingerprint", "parameter_invalid", "apiKeyFingerprint must be 64 lowercase hex characters")
	}
	es, err := c.keys.RequestLogs(r.Context(), dashboardUser(r.Context()), fp, limit)
	if err != nil {
		return nil, err
	}
	out := make([]requestLogJSON, len(es))
	for i, e := range es {
		out[i] = requestLogJSON{RequestID: e.RequestID, Method: e.Method, Path: e.Path, Status: e.Status,
			DurationMs: float64(e.Duration.Microseconds()) / 1000, APIKeyFingerprint: e.KeyFingerprint, Mode: e.Mode,
			CreatedAt: domain.Timestamp(e.CreatedAt)}
	}
	return map[string]any{"data": out}, nil
}

func isHexSHA256(s string) bool {
	if len(s) != 64 {
		return false
	}
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}
