package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
)

// QUITA_BCBPIX_CALLBACK_CA makes the PSP callback require a client
// certificate, which needs quitad's own TLS listener.
func TestCallbackCANeedsTLSAndLoads(t *testing.T) {
	dir := t.TempDir()
	pki, err := pixsim.NewTestPKI([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	if err := pki.WriteDir(dir); err != nil {
		t.Fatal(err)
	}
	ca, cert, key := filepath.Join(dir, "ca.pem"), filepath.Join(dir, "quitad-server.pem"), filepath.Join(dir, "quitad-server-key.pem")
	junk := filepath.Join(dir, "junk.pem")
	_ = os.WriteFile(junk, []byte("not a certificate"), 0o600)
	cases := []struct {
		name    string
		env     map[string]string
		wantErr string
	}{
		{"CA without TLS", map[string]string{"QUITA_BCBPIX_CALLBACK_CA": ca}, "QUITA_TLS_CERT"},
		{"certificate without key", map[string]string{"QUITA_TLS_CERT": cert}, "go together"},
		{"CA file without a certificate", map[string]string{"QUITA_TLS_CERT": cert, "QUITA_TLS_KEY": key, "QUITA_BCBPIX_CALLBACK_CA": junk}, "no PEM"},
		{"ok", map[string]string{"QUITA_TLS_CERT": cert, "QUITA_TLS_KEY": key, "QUITA_BCBPIX_CALLBACK_CA": ca}, ""},
	}
	for _, tc := range cases {
		cfg, err := parseConfig("quitad", []string{"-database-url", "sqlite::memory:"}, func(k string) string { return tc.env[k] })
		if tc.wantErr != "" {
			if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
				t.Errorf("%s: %v, want an error mentioning %q", tc.name, err, tc.wantErr)
			}
			continue
		}
		if err != nil || cfg.PSPCallbackCAs == nil || !strings.HasPrefix(cfg.BaseURL, "https://") {
			t.Fatalf("%s: %v, base %q, CAs loaded %v", tc.name, err, cfg.BaseURL, cfg.PSPCallbackCAs != nil)
		}
		// The listener requests a client certificate and serves without one.
		ln, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		tl, err := tlsListener(ln, cfg)
		if err != nil {
			t.Fatal(err)
		}
		var sawCert bool
		srv := &http.Server{Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			sawCert = len(r.TLS.PeerCertificates) > 0
		}), ReadHeaderTimeout: time.Second}
		go func() { _ = srv.Serve(tl) }()
		pool := x509.NewCertPool()
		pool.AppendCertsFromPEM(pki.CAPEM)
		cb, _ := pki.PSPCallback.TLS()
		for _, certs := range [][]tls.Certificate{nil, {cb}} {
			c := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, Certificates: certs}}}
			resp, err := c.Get("https://" + ln.Addr().String() + "/")
			if err != nil {
				t.Fatalf("with %d client certificates: %v", len(certs), err)
			}
			resp.Body.Close()
			if sawCert != (len(certs) > 0) {
				t.Errorf("with %d client certificates the handler saw one: %v", len(certs), sawCert)
			}
		}
		_ = srv.Shutdown(context.Background())
	}
}
