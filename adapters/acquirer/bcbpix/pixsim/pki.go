package pixsim

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"time"
)

// CertPair is a certificate and its private key, PEM.
type CertPair struct {
	CertPEM, KeyPEM []byte
}

// TLS loads the pair.
func (p CertPair) TLS() (tls.Certificate, error) { return tls.X509KeyPair(p.CertPEM, p.KeyPEM) }

// TestPKI is a throwaway CA and the certificates a local pixsim ↔ quitad
// setup needs, each used one way: the PSP's server certificate, the
// client certificate pixsim presents on callbacks, quitad's client
// certificate towards the PSP and quitad's server certificate. For tests
// and local runs only: real PSPs issue their own.
type TestPKI struct {
	CAPEM       []byte
	PSPServer   CertPair
	PSPCallback CertPair
	QuitaClient CertPair
	QuitaServer CertPair
}

// NewTestPKI creates a CA and the four certificates, valid from an hour
// ago until validity from now. Server certificates name hosts (IP or DNS
// names).
func NewTestPKI(hosts []string, validity time.Duration) (*TestPKI, error) {
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	from, until := time.Now().Add(-time.Hour), time.Now().Add(validity)
	ca := &x509.Certificate{SerialNumber: big.NewInt(1), Subject: pkix.Name{CommonName: "pixsim test CA"},
		NotBefore: from, NotAfter: until, IsCA: true, BasicConstraintsValid: true,
		KeyUsage: x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature}
	caDER, err := x509.CreateCertificate(rand.Reader, ca, ca, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, err
	}
	if ca, err = x509.ParseCertificate(caDER); err != nil {
		return nil, err
	}
	serial := int64(1)
	issue := func(cn string, usage x509.ExtKeyUsage, server bool) (CertPair, error) {
		k, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
		if err != nil {
			return CertPair{}, err
		}
		serial++
		tpl := &x509.Certificate{SerialNumber: big.NewInt(serial), Subject: pkix.Name{CommonName: cn},
			NotBefore: from, NotAfter: until, KeyUsage: x509.KeyUsageDigitalSignature,
			ExtKeyUsage: []x509.ExtKeyUsage{usage}}
		if server {
			for _, h := range hosts {
				if ip := net.ParseIP(h); ip != nil {
					tpl.IPAddresses = append(tpl.IPAddresses, ip)
				} else {
					tpl.DNSNames = append(tpl.DNSNames, h)
				}
			}
		}
		der, err := x509.CreateCertificate(rand.Reader, tpl, ca, &k.PublicKey, caKey)
		if err != nil {
			return CertPair{}, err
		}
		kd, err := x509.MarshalECPrivateKey(k)
		if err != nil {
			return CertPair{}, err
		}
		return CertPair{CertPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: der}),
			KeyPEM: pem.EncodeToMemory(&pem.Block{Type: "EC PRIVATE KEY", Bytes: kd})}, nil
	}
	p := &TestPKI{CAPEM: pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: caDER})}
	for _, c := range []struct {
		dst    *CertPair
		cn     string
		usage  x509.ExtKeyUsage
		server bool
	}{
		{&p.PSPServer, "pixsim", x509.ExtKeyUsageServerAuth, true},
		{&p.PSPCallback, "pixsim callbacks", x509.ExtKeyUsageClientAuth, false},
		{&p.QuitaClient, "quitad", x509.ExtKeyUsageClientAuth, false},
		{&p.QuitaServer, "quitad", x509.ExtKeyUsageServerAuth, true},
	} {
		if *c.dst, err = issue(c.cn, c.usage, c.server); err != nil {
			return nil, err
		}
	}
	return p, nil
}

// Pool is a pool holding only the CA.
func (p *TestPKI) Pool() *x509.CertPool {
	pool := x509.NewCertPool()
	pool.AppendCertsFromPEM(p.CAPEM)
	return pool
}

// Files are the names WriteDir uses, for docs and scripts.
var Files = []string{"ca.pem", "psp-server.pem", "psp-server-key.pem", "psp-callback.pem", "psp-callback-key.pem",
	"quitad-client.pem", "quitad-client-key.pem", "quitad-server.pem", "quitad-server-key.pem"}

// WriteDir writes the CA and the pairs as the files named in Files; keys
// are readable by the owner only.
func (p *TestPKI) WriteDir(dir string) error {
	if err := os.MkdirAll(dir, 0o700); err != nil {
		return err
	}
	data := [][]byte{p.CAPEM, p.PSPServer.CertPEM, p.PSPServer.KeyPEM, p.PSPCallback.CertPEM, p.PSPCallback.KeyPEM,
		p.QuitaClient.CertPEM, p.QuitaClient.KeyPEM, p.QuitaServer.CertPEM, p.QuitaServer.KeyPEM}
	for i, name := range Files {
		mode := os.FileMode(0o644)
		if i > 0 && i%2 == 0 {
			mode = 0o600
		}
		if err := os.WriteFile(filepath.Join(dir, name), data[i], mode); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
