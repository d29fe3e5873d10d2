package pixsim_test

import (
	"crypto/tls"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// Rule: the callback is protected by mutual TLS, so the PSP presents its
// client certificate; a receiver that requires one gets it, and a PSP
// without one is refused at the handshake.
func TestCallbacksPresentAClientCertificate(t *testing.T) {
	t.Parallel()
	pki, err := pixsim.NewTestPKI([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	hookCert, err := pki.QuitaServer.TLS()
	if err != nil {
		t.Fatal(err)
	}
	var seen []string
	hook := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		seen = append(seen, r.TLS.PeerCertificates[0].Subject.CommonName)
	}))
	hook.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{hookCert},
		ClientCAs: pki.Pool(), ClientAuth: tls.RequireAndVerifyClientCert}
	hook.StartTLS()
	t.Cleanup(hook.Close)

	cbCert, err := pki.PSPCallback.TLS()
	if err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name string
		cert *tls.Certificate
		want int
	}{{"with the callback certificate", &cbCert, http.StatusOK}, {"without a certificate", nil, 0}}
	for i, tc := range cases {
		sim, c := startWith(t, pixsim.Config{CallbackCert: tc.cert, CallbackCAs: pki.Pool()})
		if code, _ := c.do("PUT", "/webhook/k@example.com", `{"webhookUrl":"`+hook.URL+`/cb"}`); code != 200 {
			t.Fatal("webhook")
		}
		id := domain.DeriveTxID("pixsim", "mtls", tc.name)
		c.do("PUT", "/cob/"+id, cobBody)
		c.do("POST", "/_sim/pay", `{"txid":"`+id+`"}`)
		cbs := sim.Callbacks()
		if len(cbs) != 1 || cbs[0].Status != tc.want {
			t.Errorf("case %d %s: callbacks %+v, want one answered %d", i, tc.name, cbs, tc.want)
		}
	}
	if len(seen) != 1 || seen[0] != "pixsim callbacks" {
		t.Errorf("the receiver saw client certificates %v, want one from pixsim callbacks", seen)
	}
}
