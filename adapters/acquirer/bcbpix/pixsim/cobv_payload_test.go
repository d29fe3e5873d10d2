package pixsim_test

import (
	"crypto/ecdsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"io"
	"math/big"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
)

// locationPath is the path of a cobv's payload location on the simulator:
// its loc.location without the host.
func locationPath(t *testing.T, cob map[string]any) string {
	t.Helper()
	loc, _ := cob["loc"].(map[string]any)
	location, _ := loc["location"].(string)
	i := strings.IndexByte(location, '/')
	if location == "" || i < 0 || location != cob["location"] {
		t.Fatalf("cobv location %q (loc %v)", cob["location"], loc)
	}
	return location[i:]
}

// get sends an unauthenticated GET, as a payer's bank does.
func get(t *testing.T, url string) (int, http.Header, string) {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, resp.Header, string(b)
}

// jws is a compact JWS taken apart.
type jws struct {
	Header struct {
		Alg     string `json:"alg"`
		Typ     string `json:"typ"`
		Kid     string `json:"kid"`
		JKU     string `json:"jku"`
		X5tS256 string `json:"x5t#S256"`
	}
	Payload pixsim.CobVPayload
	signed  string
	sig     []byte
}

func parseJWS(t *testing.T, compact string) jws {
	t.Helper()
	parts := strings.Split(compact, ".")
	if len(parts) != 3 {
		t.Fatalf("JWS %q has %d parts, want 3", compact, len(parts))
	}
	var out jws
	for i, dst := range []any{&out.Header, &out.Payload} {
		raw, err := base64.RawURLEncoding.DecodeString(parts[i])
		if err != nil {
			t.Fatalf("JWS part %d: %v", i, err)
		}
		if err := json.Unmarshal(raw, dst); err != nil {
			t.Fatalf("JWS part %d %s: %v", i, raw, err)
		}
	}
	sig, err := base64.RawURLEncoding.DecodeString(parts[2])
	if err != nil {
		t.Fatal(err)
	}
	out.signed, out.sig = parts[0]+"."+parts[1], sig
	return out
}

// verify checks the JWS as the payer's bank would: the key set at the
// header's jku (its path, on the simulator) holds the key of kid, whose
// certificate chains to roots (nil: not checked) and whose key verifies
// the ES256 signature.
func (j jws) verify(t *testing.T, base string, roots *x509.CertPool) {
	t.Helper()
	if j.Header.Alg != "ES256" || j.Header.Typ != "JWS" || j.Header.Kid == "" || j.Header.X5tS256 != j.Header.Kid ||
		!strings.HasPrefix(j.Header.JKU, "https://") {
		t.Fatalf("JWS header %+v", j.Header)
	}
	path := strings.TrimPrefix(j.Header.JKU, "https://")
	path = path[strings.IndexByte(path, '/'):]
	code, _, body := get(t, base+path)
	var set struct {
		Keys []struct {
			Kid string   `json:"kid"`
			Kty string   `json:"kty"`
			X5c []string `json:"x5c"`
		} `json:"keys"`
	}
	if err := json.Unmarshal([]byte(body), &set); err != nil || code != 200 || len(set.Keys) != 1 || set.Keys[0].Kid != j.Header.Kid {
		t.Fatalf("key set at %s: %d %s", path, code, body)
	}
	var chain []*x509.Certificate
	for _, c := range set.Keys[0].X5c {
		der, err := base64.StdEncoding.DecodeString(c)
		if err != nil {
			t.Fatal(err)
		}
		cert, err := x509.ParseCertificate(der)
		if err != nil {
			t.Fatal(err)
		}
		chain = append(chain, cert)
	}
	if sum := sha256.Sum256(chain[0].Raw); base64.RawURLEncoding.EncodeToString(sum[:]) != j.Header.Kid {
		t.Error("kid is not the thumbprint of the certificate in x5c")
	}
	if roots != nil {
		if _, err := chain[0].Verify(x509.VerifyOptions{Roots: roots, KeyUsages: []x509.ExtKeyUsage{x509.ExtKeyUsageAny}}); err != nil {
			t.Errorf("the signing certificate does not chain to the PSP's CA: %v", err)
		}
	}
	key, ok := chain[0].PublicKey.(*ecdsa.PublicKey)
	if !ok || len(j.sig) != 64 {
		t.Fatalf("key %T, signature of %d bytes", chain[0].PublicKey, len(j.sig))
	}
	sum := sha256.Sum256([]byte(j.signed))
	r, s := new(big.Int).SetBytes(j.sig[:32]), new(big.Int).SetBytes(j.sig[32:])
	if !ecdsa.Verify(key, sum[:], r, s) {
		t.Error("the JWS signature does not verify")
	}
}

// The payload location of a cobv serves, without credentials, the JWS
// signed with the PSP's certificate (Config.PayloadCert, from the test
// PKI) whose valor.final is the amount due on DPP: on an early day the
// original less the discount, on a late day plus the fine and interest,
// with the parts as the spec's CobVPayloadValor shows them.
func TestCobVPayloadIsSignedWithTheAmountDueOnDPP(t *testing.T) {
	t.Parallel()
	pki, err := pixsim.NewTestPKI([]string{"pixsim.local"}, time.Hour)
	if err != nil {
		t.Fatal(err)
	}
	cert, err := pki.PSPServer.TLS()
	if err != nil {
		t.Fatal(err)
	}
	clock := &simClock{now: time.Date(2026, 3, 2, 15, 0, 0, 0, time.UTC)}
	_, c := startWith(t, pixsim.Config{Now: clock.Now, PayloadCert: &cert})
	id := domain.DeriveTxID("pixsim", "payload")
	code, cob := c.do("PUT", "/cobv/"+id, cobvBody)
	if code != 201 {
		t.Fatalf("create: %d %v", code, cob)
	}
	path := locationPath(t, cob)
	if strings.Contains(path, id) {
		t.Errorf("the location %s names the txid: it must be a capability URL", path)
	}
	for _, tc := range []struct {
		name  string
		query string
		want  pixsim.PayloadValor
	}{
		// R$ 5.00 off until 10 March.
		{"early", "?DPP=2026-03-05", pixsim.PayloadValor{Original: "100.00", Desconto: "5.00", Final: "95.00"}},
		{"today by default", "", pixsim.PayloadValor{Original: "100.00", Desconto: "5.00", Final: "95.00"}},
		{"on the due date", "?DPP=2026-03-20&codMun=3550308", pixsim.PayloadValor{Original: "100.00", Final: "100.00"}},
		// 5 days late: a 2 % fine (2.00) and 1 % a month over 30 days × 5
		// of 100.00 = 0.1666… → 0.16.
		{"late", "?DPP=2026-03-25", pixsim.PayloadValor{Original: "100.00", Multa: "2.00", Juros: "0.16", Final: "102.16"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			code, h, body := get(t, c.base+path+tc.query)
			if code != 200 || h.Get("Content-Type") != "application/jose" {
				t.Fatalf("%d %s: %s", code, h.Get("Content-Type"), body)
			}
			j := parseJWS(t, body)
			j.verify(t, c.base, pki.Pool())
			if j.Payload.Valor != tc.want {
				t.Errorf("valor %+v, want %+v", j.Payload.Valor, tc.want)
			}
			p := j.Payload
			if p.TxID != id || p.Status != pixsim.CobActive || p.Revisao != 0 || p.Calendario.DataDeVencimento != "2026-03-20" ||
				p.Calendario.ValidadeAposVencimento != 10 || p.Devedor.CPF != "12345678909" || p.Recebedor.CEP == "" || p.Chave != "k@example.com" {
				t.Errorf("payload %+v", p)
			}
			if at, err := time.Parse(time.RFC3339, p.Calendario.Apresentacao); err != nil || !at.Equal(clock.Now()) {
				t.Errorf("apresentacao %q, want the moment it was read", p.Calendario.Apresentacao)
			}
		})
	}
}

// Without Config.PayloadCert the simulator signs with a certificate of its
// own, published at the jku like any other.
func TestCobVPayloadSignedByDefault(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	id := domain.DeriveTxID("pixsim", "payload-default")
	_, cob := c.do("PUT", "/cobv/"+id, cobvBody)
	code, _, body := get(t, c.base+locationPath(t, cob))
	if code != 200 {
		t.Fatalf("%d %s", code, body)
	}
	j := parseJWS(t, body)
	j.verify(t, c.base, nil)
	if j.Payload.Valor.Final != "95.00" {
		t.Errorf("valor %+v", j.Payload.Valor)
	}
}

// A revised cobv's payload follows the revision: revisao and the new
// amount.
func TestCobVPayloadFollowsARevision(t *testing.T) {
	t.Parallel()
	_, c, _ := startCobV(t)
	id := domain.DeriveTxID("pixsim", "payload-revised")
	_, cob := c.do("PUT", "/cobv/"+id, cobvBody)
	if code, got := c.do("PATCH", "/cobv/"+id, `{"valor":{"multa":{"modalidade":1,"valorPerc":"7.00"},"juros":null}}`); code != 200 || got["revisao"] != 1.0 {
		t.Fatalf("revise: %d %v", code, got)
	}
	_, _, body := get(t, c.base+locationPath(t, cob)+"?DPP=2026-03-25")
	j := parseJWS(t, body)
	if want := (pixsim.PayloadValor{Original: "100.00", Multa: "7.00", Final: "107.00"}); j.Payload.Valor != want || j.Payload.Revisao != 1 {
		t.Errorf("after the revision: revisao %d valor %+v, want 1 and %+v", j.Payload.Revisao, j.Payload.Valor, want)
	}
}
