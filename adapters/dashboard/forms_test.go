package dashboard_test

import (
	"bytes"
	"mime/multipart"
	"net/http"
	"net/url"
	"strings"
	"testing"

	"github.com/quitapix/quita/quitatest"
)

// Security item 24: every dashboard POST reads its form under the size
// limit before the CSRF check or the handler looks at a field, and no
// dashboard form is multipart. An over-size or multipart form carrying a
// valid token is refused (413, 415) and changes nothing; the same form at
// a normal size works.
func TestFormsAreBoundedBeforeTheyAreRead(t *testing.T) {
	t.Parallel()
	srv := quitatest.NewServer(t, quitatest.Options{})
	m := newMerchant(t, srv, "Loja Formulários")
	b := newBrowser(t, srv)
	b.login(m)
	keys := func() int { return strings.Count(b.get("/dashboard/test/keys").Body, "data-key=") }
	before := keys()
	csrf := csrfOf(t, b.get("/dashboard/test/keys").Body)
	pad := strings.Repeat("x", 20<<10) // over the 16 KiB limit, far under Go's 10 MB

	big := b.post("/dashboard/test/keys", url.Values{"csrf": {csrf}, "label": {"big"}, "pad": {pad}})
	if big.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("over-size form: %d, want 413", big.Status)
	}

	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	_ = mw.WriteField("csrf", csrf)
	_ = mw.WriteField("label", "multipart")
	fw, _ := mw.CreateFormFile("upload", "f.bin")
	_, _ = fw.Write([]byte("file part"))
	_ = mw.Close()
	req, _ := http.NewRequest(http.MethodPost, srv.URL+"/dashboard/test/keys", &body)
	req.Header.Set("Content-Type", mw.FormDataContentType())
	req.Header.Set("Origin", srv.URL)
	if res := b.do(req); res.Status != http.StatusUnsupportedMediaType {
		t.Errorf("multipart form: %d, want 415", res.Status)
	}
	if n := keys(); n != before {
		t.Fatalf("refused forms issued %d keys", n-before)
	}

	// Logout is bounded too: refused, the session lives on.
	if res := b.post("/dashboard/logout", url.Values{"csrf": {csrf}, "pad": {pad}}); res.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("over-size logout: %d, want 413", res.Status)
	}
	if res := b.get("/dashboard/test/keys"); res.Status != http.StatusOK {
		t.Errorf("session after a refused logout: %d", res.Status)
	}
	// The login form has its own, smaller limit.
	fresh := newBrowser(t, srv)
	lp := fresh.get("/dashboard/login")
	if res := fresh.post("/dashboard/login", url.Values{"csrf": {csrfOf(t, lp.Body)}, "email": {m.Email}, "password": {password},
		"pad": {strings.Repeat("x", 9<<10)}}); res.Status != http.StatusRequestEntityTooLarge {
		t.Errorf("over-size login: %d, want 413", res.Status)
	}

	// The same forms at a normal size.
	if res := b.post("/dashboard/test/keys", url.Values{"csrf": {csrf}, "label": {"small"}, "pad": {"x"}}); res.Status != http.StatusOK {
		t.Errorf("normal form: %d", res.Status)
	}
	if n := keys(); n != before+1 {
		t.Errorf("keys %d, want %d", n, before+1)
	}
	if res := b.post("/dashboard/logout", url.Values{"csrf": {csrf}}); res.Status != http.StatusSeeOther {
		t.Errorf("logout: %d", res.Status)
	}
}
