package main

import (
	"crypto/tls"
	"crypto/x509"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// make pixsim-certs runs `pixsim certs`: the pair pixsim presents on
// callbacks must load and chain to the CA written beside it, for client
// authentication.
func TestCertsWritesACallbackPairThatChainsToTheCA(t *testing.T) {
	dir := t.TempDir()
	if err := run([]string{"certs", "-dir", dir, "-days", "1"}); err != nil {
		t.Fatal(err)
	}
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "psp-callback.pem"), filepath.Join(dir, "psp-callback-key.pem"))
	if err != nil {
		t.Fatal(err)
	}
	caPEM, err := os.ReadFile(filepath.Join(dir, "ca.pem"))
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(caPEM)
	leaf, err := x509.ParseCertificate(pair.Certificate[0])
	if err != nil {
		t.Fatal(err)
	}
	if _, err := leaf.Verify(x509.VerifyOptions{Roots: pool, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}}); err != nil {
		t.Errorf("the callback certificate does not verify as a client certificate of the CA: %v", err)
	}
	if st, err := os.Stat(filepath.Join(dir, "psp-callback-key.pem")); err != nil || st.Mode().Perm() != 0o600 {
		t.Errorf("key file mode %v, %v; want 0600", st.Mode().Perm(), err)
	}
}

func TestCallbackCertFlagsGoTogether(t *testing.T) {
	t.Setenv("PIXSIM_CLIENT_SECRET", "s")
	err := run([]string{"-client-secret", "s", "-callback-cert", "x.pem"})
	if err == nil || !strings.Contains(err.Error(), "-callback-key") {
		t.Errorf("a certificate without its key: %v", err)
	}
}
