package bcbpix_test

import (
	"context"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"log/slog"
	"math/big"
	"net"
	"net/http/httptest"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/ports"
)

// testPKI is a CA generated for one test, with a server certificate for
// 127.0.0.1 and a client certificate, all PEM.
type testPKI struct {
	CAPEM                       string
	ServerCert                  tls.Certificate
	ClientCertPEM, ClientKeyPEM string
	Pool                        *x509.CertPool
}

func newPKI(t testing.TB) testPKI {
	t.Helper()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		t.Fatal(err)
	}
	now := time.Now()
	caTpl := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "quita test CA"},
		NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, caTpl, caTpl, &caKey.PublicKey, caKey)
	if err != nil {
		t.Fatal(err)
	}
	ca, _ := x509.ParseCertificate(caDER)
	issue := func(serial int64, cn string, usage x509.ExtKeyUsage, ips []net.IP) (certPEM, keyPEM []byte) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			t.Fatal(err)
		}
		tpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: now.Add(-time.Hour), NotAfter: now.Add(time.Hour), KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}, IPAddresses: ips}
		der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &k.PublicKey, caKey)
		if err != nil {
			t.Fatal(err)
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			t.Fatal(err)
		}
		return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}), pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})
	}
	sc, sk := issue(2, "pixsim", x509.ExtKeyUsageServerAuth, []net.IP{net.IPv4(127, 0, 0, 1)})
	cc, ck := issue(3, "quita", x509.ExtKeyUsageClientAuth, nil)
	server, err := tls.X509KeyPair(sc, sk)
	if err != nil {
		t.Fatal(err)
	}
	pool := x509.NewCertPool()
	pool.AddCert(ca)
	return testPKI{CAPEM: string(pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})), ServerCert: server,
		ClientCertPEM: string(cc), ClientKeyPEM: string(ck), Pool: pool}
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
	sim := pixsim.New(pixsim.Config{ClientID: testClientID, ClientSecret: testClientSecret})
	hs := httptest.NewUnstartedServer(sim)
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
