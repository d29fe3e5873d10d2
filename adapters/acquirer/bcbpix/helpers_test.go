package bcbpix_test

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/ports"
)

// testPKI is a CA generated for one test (pixsim.NewTestPKI) with the
// pairs of both directions: quitad → PSP and PSP → quitad callbacks.
type testPKI struct {
	*pixsim.TestPKI
	CAPEM                       string
	ServerCert                  tls.Certificate
	ClientCertPEM, ClientKeyPEM string
	Pool                        *x509.CertPool
}

func newPKI(t testing.TB) testPKI {
	t.Helper()
	p, err := pixsim.NewTestPKI([]string{"127.0.0.1"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	server, err := p.PSPServer.TLS()
	if err != nil {
		t.Fatal(err)
	}
	return testPKI{TestPKI: p, CAPEM: string(p.CAPEM), ServerCert: server, ClientCertPEM: string(p.QuitaClient.CertPEM),
		ClientKeyPEM: string(p.QuitaClient.KeyPEM), Pool: p.Pool()}
}

const (
	testClientID     = "quita-client"
	testClientSecret = "s3cr3t-client-secret-value-XYZ"
	testPixKey       = "recebimentos@loja.example.com"
)

// startPSP runs pixsim over TLS 1.2+ requiring a client certificate of
// the test CA.
func startPSP(t testing.TB, pki testPKI) (*pixsim.Server, *httptest.Server) {
	t.Helper()
	return startPSPWith(t, pki, pixsim.Config{})
}

// startPSPWith is startPSP with more of the simulator's knobs; callbacks
// present the PKI's PSP callback certificate and trust its CA.
func startPSPWith(t testing.TB, pki testPKI, cfg pixsim.Config) (*pixsim.Server, *httptest.Server) {
	t.Helper()
	return startPSPWrapped(t, pki, cfg, nil)
}

// startPSPWrapped is startPSPWith with wrap, when not nil, between the
// listener and pixsim.
func startPSPWrapped(t testing.TB, pki testPKI, cfg pixsim.Config, wrap func(http.Handler) http.Handler) (*pixsim.Server, *httptest.Server) {
	t.Helper()
	cb, err := pki.PSPCallback.TLS()
	if err != nil {
		t.Fatal(err)
	}
	cfg.ClientID, cfg.ClientSecret, cfg.CallbackCert, cfg.CallbackCAs = testClientID, testClientSecret, &cb, pki.Pool
	sim := pixsim.New(cfg)
	t.Cleanup(sim.Close)
	var h http.Handler = sim
	if wrap != nil {
		h = wrap(sim)
	}
	hs := httptest.NewUnstartedServer(h)
	hs.TLS = &tls.Config{MinVersion: tls.VersionTLS12, Certificates: []tls.Certificate{pki.ServerCert},
		ClientCAs: pki.Pool, ClientAuth: tls.RequireAndVerifyClientCert}
	hs.StartTLS()
	t.Cleanup(hs.Close)
	return sim, hs
}

func accountConfig(pki testPKI, baseURL string) bcbpix.AccountConfig {
	return bcbpix.AccountConfig{BaseURL: baseURL, ClientID: testClientID, ClientSecret: testClientSecret,
		CertPEM: pki.ClientCertPEM, KeyPEM: pki.ClientKeyPEM, CAPEM: pki.CAPEM, PixKey: testPixKey}
}

// memStore is an in-memory ports.AcquirerAccountStore.
type memStore struct {
	mu    sync.Mutex
	accts map[string]ports.AcquirerAccount
	txids map[string]string
}

func newMemStore() *memStore {
	return &memStore{accts: map[string]ports.AcquirerAccount{}, txids: map[string]string{}}
}

func (m *memStore) PutAcquirerAccount(_ context.Context, a ports.AcquirerAccount) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.accts[a.AccountID+"/"+a.Provider] = a
	return nil
}

func (m *memStore) GetAcquirerAccount(_ context.Context, accountID, provider string) (*ports.AcquirerAccount, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	a, ok := m.accts[accountID+"/"+provider]
	if !ok {
		return nil, ports.ErrNotFound
	}
	return &a, nil
}

func (m *memStore) ListAcquirerAccounts(_ context.Context, provider string) ([]ports.AcquirerAccount, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	var out []ports.AcquirerAccount
	for _, a := range m.accts {
		if a.Provider == provider {
			out = append(out, a)
		}
	}
	return out, nil
}

func (m *memStore) FindChargeByTxID(_ context.Context, _ ports.Scope, txid string) (string, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	id, ok := m.txids[txid]
	if !ok {
		return "", ports.ErrNotFound
	}
	return id, nil
}

func testKey() []byte {
	k := make([]byte, 32)
	for i := range k {
		k[i] = byte(i * 7)
	}
	return k
}

// newAdapter returns the adapter over a fresh store with account acct
// configured for the PSP at baseURL.
func newAdapter(t testing.TB, pki testPKI, baseURL, acct string) (*bcbpix.Acquirer, *memStore) {
	t.Helper()
	sealer, err := bcbpix.NewSealer(testKey())
	if err != nil {
		t.Fatal(err)
	}
	st := newMemStore()
	a := bcbpix.New(st, sealer, bcbpix.Options{Retry: []time.Duration{5 * time.Millisecond, 10 * time.Millisecond},
		Log: slog.New(slog.DiscardHandler)})
	if err := a.Configure(context.Background(), acct, accountConfig(pki, baseURL)); err != nil {
		t.Fatal(err)
	}
	return a, st
}
