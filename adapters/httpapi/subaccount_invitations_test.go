package httpapi_test

import (
	"bytes"
	"io"
	"net/http"
	"net/http/cookiejar"
	"net/url"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/internal/testkit"
)

// TestSubaccountInvitationsAPI covers POST and GET
// /v1/subaccounts/{id}/invitations on both databases: the link once in
// the create answer, never in the list; the refusals (another platform's
// or a sibling's seller, a sub-account's own scope, a bad e-mail, a
// disabled seller); the Idempotency-Key replay; then the link accepted on
// the dashboard (once), the login it made scoped to the seller, and
// disable ending that login; and expiry after seven days.
func TestSubaccountInvitationsAPI(t *testing.T) {
	t.Parallel()
	for _, d := range payDialects {
		t.Run(d.name, func(t *testing.T) {
			t.Parallel()
			e := newPayEnv(t, d.dsn(t))
			seller, sibling := e.newSeller("Pizzaria Bella"), e.newSeller("Lanches do João")
			other := e.srv.NewAccount(t, "Outra Plataforma")
			path := "/subaccounts/" + seller + "/invitations"

			inv := e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "bella@example.com"}, "Idempotency-Key", "invite-bella-1")
			e.want(inv, 201, "")
			link := inv.str("url")
			token, ok := strings.CutPrefix(link, e.srv.URL+"/dashboard/invite/")
			if !ok || len(token) != 43 || inv.str("object") != "subaccount_invitation" || inv.str("status") != "pending" ||
				inv.str("account") != seller || inv.str("email") != "bella@example.com" || !strings.HasPrefix(inv.str("id"), domain.PrefixInvitation) {
				t.Fatalf("created: %s", inv.Raw)
			}
			created, _ := time.Parse(time.RFC3339, inv.str("created_at"))
			expires, _ := time.Parse(time.RFC3339, inv.str("expires_at"))
			if expires.Sub(created) != domain.InvitationTTL || inv.Body["accepted_at"] != nil {
				t.Errorf("expiry: %s", inv.Raw)
			}
			again := e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "bella@example.com"}, "Idempotency-Key", "invite-bella-1")
			if again.Status != 201 || again.str("id") != inv.str("id") || again.Header.Get("Idempotent-Replayed") != "true" {
				t.Errorf("replay: %d %s", again.Status, again.Raw)
			}
			list := e.as("GET", path, e.acct.TestKey, "", nil)
			e.want(list, 200, "")
			if data, _ := list.Body["data"].([]any); len(data) != 1 || bytes.Contains(list.Raw, []byte(token)) || bytes.Contains(list.Raw, []byte(`"url"`)) {
				t.Errorf("list: %s", list.Raw)
			}
			e.want(e.as("GET", path+"?limit=0", e.acct.TestKey, "", nil), 400, "parameter_invalid")

			// Refusals: not this platform's seller, or not a platform.
			for name, r := range map[string]apiResp{
				"another platform":    e.as("POST", path, other.TestKey, "", map[string]any{"email": "x@example.com"}),
				"another's list":      e.as("GET", path, other.TestKey, "", nil),
				"acting for sibling":  e.as("POST", path, e.acct.TestKey, sibling, map[string]any{"email": "x@example.com"}),
				"the platform itself": e.as("POST", "/subaccounts/"+e.acct.AccountID+"/invitations", e.acct.TestKey, "", map[string]any{"email": "x@example.com"}),
				"not an account id":   e.as("POST", "/subaccounts/ch_x/invitations", e.acct.TestKey, "", map[string]any{"email": "x@example.com"}),
			} {
				if r.Status != 404 {
					t.Errorf("%s: %d %s", name, r.Status, r.Raw)
				}
			}
			r := e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "bella"})
			if r.Status != 400 || r.code() != "parameter_invalid" || r.param() != "email" {
				t.Errorf("bad e-mail: %s", r.Raw)
			}
			e.want(e.as("POST", path, e.acct.TestKey, "", map[string]any{}), 400, "parameter_missing")
			e.want(e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "a@example.com", "role": "admin"}), 400, "")

			// Accepted on the dashboard, once.
			jar, _ := cookiejar.New(nil)
			web := &http.Client{Jar: jar, CheckRedirect: func(*http.Request, []*http.Request) error { return http.ErrUseLastResponse }}
			status, body := getPage(t, web, link)
			csrf := regexp.MustCompile(`name="csrf" value="([^"]+)"`).FindStringSubmatch(body)
			if status != 200 || csrf == nil || !strings.Contains(body, "Pizzaria Bella") {
				t.Fatalf("accept page: %d", status)
			}
			const pw = "senha-da-bella-123"
			res := postForm(t, web, e.srv.URL, link, url.Values{"csrf": {csrf[1]}, "password": {pw}, "password_confirm": {pw}})
			if res.StatusCode != http.StatusSeeOther || res.Header.Get("Location") != "/dashboard/live/?done=invite_accepted" {
				t.Fatalf("accept: %d %s", res.StatusCode, res.Header.Get("Location"))
			}
			if status, _ := getPage(t, &http.Client{}, link); status != http.StatusGone {
				t.Errorf("used link: %d", status)
			}
			if l := e.as("GET", path, e.acct.TestKey, "", nil); !strings.Contains(string(l.Raw), `"status":"accepted"`) {
				t.Errorf("accepted invitation listed as %s", l.Raw)
			}
			// The login is the seller's: its Bearer token lists the seller's keys.
			login := testkit.Do(t, http.MethodPost, e.srv.BaseURL+"/auth/login", map[string]any{"email": "bella@example.com", "password": pw}, nil).Want(t, 200)
			var sess struct {
				Token     string `json:"token"`
				AccountID string `json:"accountId"`
			}
			login.Decode(t, &sess)
			if sess.AccountID != seller {
				t.Fatalf("the login's account %q, want %q", sess.AccountID, seller)
			}
			bearer := testkit.Header{"Authorization": "Bearer " + sess.Token}
			issued := testkit.Do(t, http.MethodPost, e.srv.BaseURL+"/api-keys", map[string]any{"label": "loja", "test": true}, bearer).Want(t, 201)
			var k struct {
				APIKey string `json:"apiKey"`
			}
			issued.Decode(t, &k)
			e.want(e.as("GET", "/subaccounts", k.APIKey, "", nil), 200, "")
			e.want(e.as("POST", "/subaccounts/"+sibling+"/invitations", k.APIKey, "", map[string]any{"email": "x@example.com"}), 404, "resource_not_found")

			// Disable: the seller's sessions, logins and invitations stop.
			pending := e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "outro@example.com"})
			e.want(pending, 201, "")
			e.want(e.as("POST", "/subaccounts/"+seller+"/disable", e.acct.TestKey, "", nil), 200, "")
			testkit.Do(t, http.MethodGet, e.srv.BaseURL+"/api-keys", nil, bearer).Want(t, 401)
			testkit.Do(t, http.MethodPost, e.srv.BaseURL+"/auth/login", map[string]any{"email": "bella@example.com", "password": pw}, nil).Want(t, 401)
			if status, _ := getPage(t, &http.Client{}, pending.str("url")); status != http.StatusGone {
				t.Errorf("a disabled seller's invitation: %d", status)
			}
			e.want(e.as("POST", path, e.acct.TestKey, "", map[string]any{"email": "x@example.com"}), 409, "subaccount_disabled")
			e.want(e.as("GET", path, e.acct.TestKey, "", nil), 200, "")

			// Seven days on, an unused invitation has expired.
			old := e.as("POST", "/subaccounts/"+sibling+"/invitations", e.acct.TestKey, "", map[string]any{"email": "joao@example.com"})
			e.want(old, 201, "")
			e.clock.Advance(domain.InvitationTTL)
			if status, _ := getPage(t, &http.Client{}, old.str("url")); status != http.StatusGone {
				t.Errorf("expired link: %d", status)
			}
			if l := e.as("GET", "/subaccounts/"+sibling+"/invitations", e.acct.TestKey, "", nil); !strings.Contains(string(l.Raw), `"status":"expired"`) {
				t.Errorf("expired invitation listed as %s", l.Raw)
			}
		})
	}
}

func getPage(t *testing.T, c *http.Client, u string) (int, string) {
	t.Helper()
	res, err := c.Get(u)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	b, _ := io.ReadAll(res.Body)
	return res.StatusCode, string(b)
}

func postForm(t *testing.T, c *http.Client, origin, u string, f url.Values) *http.Response {
	t.Helper()
	req, _ := http.NewRequest(http.MethodPost, u, strings.NewReader(f.Encode()))
	req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
	req.Header.Set("Origin", origin)
	res, err := c.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	_ = res.Body.Close()
	return res
}
