package dashboard

import (
	"net/http"
	"net/http/httptest"
	"testing"
	"time"
)

// Served over https, the session and login cookies are host-only
// (__Host-, Secure, Path=/), so a sibling subdomain or a plain-http page
// cannot set or shadow them; over plain http they keep their bare names
// and the dashboard's path. Each is read back under the name it was set.
func TestCookiesAreHostOnlyWhenSecure(t *testing.T) {
	t.Parallel()
	for _, tc := range []struct {
		secure     bool
		name, path string
	}{
		{true, "__Host-" + sessionCookie, "/"},
		{false, sessionCookie, Base},
	} {
		c := &Controller{cfg: Config{SecureCookies: tc.secure}}
		r := httptest.NewRequest(http.MethodGet, "/dashboard/test/keys", nil)
		w := httptest.NewRecorder()
		c.setCookie(w, r, sessionCookie, "tok", time.Now().Add(time.Hour))
		cks := w.Result().Cookies()
		if len(cks) != 1 || cks[0].Name != tc.name || cks[0].Path != tc.path || cks[0].Secure != tc.secure ||
			cks[0].Domain != "" || !cks[0].HttpOnly {
			t.Fatalf("secure=%v: cookie %+v, want %s on %s", tc.secure, cks, tc.name, tc.path)
		}
		r.AddCookie(cks[0])
		if got, err := c.cookie(r, sessionCookie); err != nil || got.Value != "tok" {
			t.Errorf("secure=%v: read back %v %v", tc.secure, got, err)
		}
		// A bare-named cookie (set by a plain-http page) is not taken for
		// the host-only one.
		if tc.secure {
			bare := httptest.NewRequest(http.MethodGet, "/dashboard/test/keys", nil)
			bare.AddCookie(&http.Cookie{Name: sessionCookie, Value: "planted"})
			if _, err := c.cookie(bare, sessionCookie); err == nil {
				t.Error("a bare cookie was read as the session on https")
			}
		}
	}
}
