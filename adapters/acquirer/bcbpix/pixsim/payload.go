package pixsim

import (
	"crypto"
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/tls"
	"encoding/asn1"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"math/big"
	"net/http"
	"regexp"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// The payload problem types.
const (
	ProblemCobPayloadNotFound = problemBase + "CobPayloadNaoEncontrado"
	ProblemCobPayloadInvalid  = problemBase + "CobPayloadOperacaoInvalida"
)

// cobvLocations are the payload locations of cobvs: the URL the BR Code
// carries, which the payer's bank reads (GET, no credentials) to learn
// what to pay on its day. Each is a capability URL: a random
// pixUrlAccessToken, never the txid.
type cobvLocations struct {
	// base is host and path of every location, without scheme; path is
	// its path, where the handler serves them.
	base, path string
	// tokens maps a pixUrlAccessToken to its cobv's txid.
	tokens map[string]string
	// signer signs payloads; made on first use when Config.PayloadCert
	// is nil.
	signer *jwsSigner
}

// cobvRoutes registers GET /cobv (the list) and, under the path of
// Config.LocationHost (/qr when it names none, so that the locations never
// meet the API's /cobv/{txid}), the payload locations
// GET <path>/cobv/{pixUrlAccessToken} and the key set
// GET <path>/jwks their JWS header's jku names.
func (s *Server) cobvRoutes(m *http.ServeMux) {
	base := strings.TrimSuffix(s.cfg.LocationHost, "/")
	path := ""
	if i := strings.IndexByte(base, '/'); i >= 0 {
		path = base[i:]
	}
	if path == "" {
		base, path = base+"/qr", "/qr"
	}
	s.cobvLoc = cobvLocations{base: base, path: path, tokens: map[string]string{}}
	m.HandleFunc("GET /cobv", s.auth(s.listCobV))
	m.HandleFunc("GET "+path+"/cobv/{token}", s.getCobVPayload)
	m.HandleFunc("GET "+path+"/jwks", s.getJWKS)
}

// newCobVLocationLocked draws the location of a new cobv.
func (s *Server) newCobVLocationLocked(txid string) (string, error) {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return "", err
	}
	token := hex.EncodeToString(b)
	s.cobvLoc.tokens[token] = txid
	return s.cobvLoc.base + "/cobv/" + token, nil
}

// CobVPayload is the payload JSON of a cobv (API Pix "CobVPayload"): the
// cobv as the payer's bank shows it, with valor computed for the day of
// payment.
type CobVPayload struct {
	Calendario struct {
		Criacao                string `json:"criacao"`
		Apresentacao           string `json:"apresentacao"`
		DataDeVencimento       string `json:"dataDeVencimento"`
		ValidadeAposVencimento int    `json:"validadeAposVencimento"`
	} `json:"calendario"`
	Devedor            Person       `json:"devedor"`
	Recebedor          Recebedor    `json:"recebedor"`
	TxID               string       `json:"txid"`
	Revisao            int          `json:"revisao"`
	Status             string       `json:"status"`
	Valor              PayloadValor `json:"valor"`
	Chave              string       `json:"chave"`
	SolicitacaoPagador string       `json:"solicitacaoPagador,omitempty"`
}

// PayloadValor is the amount of a cobv on one day (CobVPayloadValor), in
// decimal reais: Final = Original − Abatimento − Desconto + Multa + Juros.
// A part that is zero that day is left out.
type PayloadValor struct {
	Original   string `json:"original"`
	Multa      string `json:"multa,omitempty"`
	Juros      string `json:"juros,omitempty"`
	Abatimento string `json:"abatimento,omitempty"`
	Desconto   string `json:"desconto,omitempty"`
	Final      string `json:"final"`
}

func decimalOrEmpty(centavos int64) string {
	if centavos == 0 {
		return ""
	}
	return domain.FormatDecimal(centavos)
}

// codMunRE is the query's codMun: the IBGE's seven-digit municipality
// code.
var codMunRE = regexp.MustCompile(`^\d{7}$`)

// ibgeUF are the IBGE codes of the states and the Federal District, the
// first two digits of every municipality code.
var ibgeUF = map[string]bool{"11": true, "12": true, "13": true, "14": true, "15": true, "16": true, "17": true,
	"21": true, "22": true, "23": true, "24": true, "25": true, "26": true, "27": true, "28": true, "29": true,
	"31": true, "32": true, "33": true, "35": true, "41": true, "42": true, "43": true,
	"50": true, "51": true, "52": true, "53": true}

// getCobVPayload serves GET <path>/cobv/{pixUrlAccessToken}?DPP=&codMun=:
// the cobv's payload, signed (JWS compact serialization, application/jose),
// with valor.final the amount due on DPP (today in Brasília when absent),
// computed by domain.DueTerms.AmountDue. An unknown location is 404 and a
// cobv that can no longer be paid 410 (CobPayloadNaoEncontrado); a DPP
// that is not a date, before today or after the last payable day, and a
// codMun that is not seven digits of a state's code, are 400
// (CobPayloadOperacaoInvalida). codMun changes nothing else: only
// national holidays are counted.
func (s *Server) getCobVPayload(w http.ResponseWriter, r *http.Request) {
	if s.down.Load() {
		s.unavailable(w)
		return
	}
	q := r.URL.Query()
	s.mu.Lock()
	rec := s.cobvs[s.cobvLoc.tokens[r.PathValue("token")]]
	if rec == nil {
		s.mu.Unlock()
		problem(w, http.StatusNotFound, ProblemCobPayloadNotFound, "Cobrança não encontrada.",
			"A cobrança em questão não foi encontrada para a location requisitada.")
		return
	}
	s.expireCobVLocked(rec)
	if rec.cur.Status != CobActive {
		s.mu.Unlock()
		problem(w, http.StatusGone, ProblemCobPayloadNotFound, "Cobrança não encontrada.",
			"A cobrança desta location não pode mais ser paga.")
		return
	}
	now := s.now()
	dpp, v := today(now), []Violacao(nil)
	if q.Has("DPP") {
		d, err := bizdays.ParseDate(q.Get("DPP"))
		switch {
		case err != nil:
			v = append(v, Violacao{Razao: "DPP não respeita o schema", Propriedade: "DPP"})
		case d.Before(dpp):
			v = append(v, Violacao{Razao: "DPP anterior ao momento presente", Propriedade: "DPP"})
		case d.After(rec.terms.LastPayableDay()):
			v = append(v, Violacao{Razao: "DPP superior à validade da cobrança", Propriedade: "DPP"})
		default:
			dpp = d
		}
	}
	if q.Has("codMun") {
		if c := q.Get("codMun"); !codMunRE.MatchString(c) || !ibgeUF[c[:2]] {
			v = append(v, Violacao{Razao: "codMun não é um código de município do IBGE", Propriedade: "codMun"})
		}
	}
	var b domain.DueBreakdown
	var err error
	if len(v) == 0 {
		if b, err = rec.terms.AmountDue(dpp); err != nil {
			v = append(v, Violacao{Razao: "DPP fora da validade da cobrança", Propriedade: "DPP"})
		}
	}
	if len(v) > 0 {
		s.mu.Unlock()
		problem(w, http.StatusBadRequest, ProblemCobPayloadInvalid, "Requisição inválida.", "A cobrança existe, mas a requisição é inválida.", v...)
		return
	}
	var p CobVPayload
	p.Calendario.Criacao, p.Calendario.Apresentacao = rec.cur.Calendario.Criacao, stamp(now)
	p.Calendario.DataDeVencimento = rec.cur.Calendario.DataDeVencimento
	p.Calendario.ValidadeAposVencimento = *rec.terms.Params().DaysAfterDue
	p.Devedor, p.Recebedor, p.TxID, p.Revisao, p.Status = rec.cur.Devedor, rec.cur.Recebedor, rec.cur.TxID, rec.cur.Revisao, rec.cur.Status
	p.Chave, p.SolicitacaoPagador = rec.cur.Chave, rec.cur.SolicitacaoPagador
	p.Valor = PayloadValor{Original: domain.FormatDecimal(b.Original), Multa: decimalOrEmpty(b.Fine), Juros: decimalOrEmpty(b.Interest),
		Abatimento: decimalOrEmpty(b.Abatement), Desconto: decimalOrEmpty(b.Discount), Final: domain.FormatDecimal(b.AmountDue)}
	signer, err := s.payloadSignerLocked()
	s.mu.Unlock()
	var jws string
	if err == nil {
		jws, err = signer.sign(p)
	}
	if err != nil {
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
		return
	}
	w.Header().Set("Content-Type", "application/jose")
	w.WriteHeader(http.StatusOK)
	_, _ = w.Write([]byte(jws))
}

// getJWKS serves the key set that verifies the payloads (RFC 7517), the
// signing certificate's chain in x5c.
func (s *Server) getJWKS(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	signer, err := s.payloadSignerLocked()
	s.mu.Unlock()
	if err != nil {
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]any{"keys": []any{signer.jwk}})
}

// payloadSignerLocked is the payload signer: Config.PayloadCert's, or a
// certificate of a throwaway test PKI (NewTestPKI) made on first use.
func (s *Server) payloadSignerLocked() (*jwsSigner, error) {
	if s.cobvLoc.signer != nil {
		return s.cobvLoc.signer, nil
	}
	cert := s.cfg.PayloadCert
	if cert == nil {
		host, _, _ := strings.Cut(s.cobvLoc.base, "/")
		pki, err := NewTestPKI([]string{host}, 10*365*24*time.Hour)
		if err != nil {
			return nil, err
		}
		pair, err := pki.PSPServer.TLS()
		if err != nil {
			return nil, err
		}
		if block := pemBlock(pki.CAPEM); block != nil {
			pair.Certificate = append(pair.Certificate, block)
		}
		cert = &pair
	}
	signer, err := newJWSSigner(cert, "https://"+s.cobvLoc.base+"/jwks")
	if err != nil {
		return nil, err
	}
	s.cobvLoc.signer = signer
	return signer, nil
}

// jwsSigner signs payloads as compact JWS with its certificate's key:
// ES256 for an ECDSA P-256 key, RS256 for an RSA key. The header names the
// algorithm, typ JWS, the key (kid, the certificate's SHA-256 thumbprint,
// also as x5t#S256) and jku, where the key set is served.
type jwsSigner struct {
	key    crypto.Signer
	alg    string
	header string // base64url of the JOSE header
	jwk    map[string]any
}

func newJWSSigner(cert *tls.Certificate, jku string) (*jwsSigner, error) {
	if len(cert.Certificate) == 0 {
		return nil, errors.New("pixsim: the payload certificate is empty")
	}
	key, ok := cert.PrivateKey.(crypto.Signer)
	if !ok {
		return nil, errors.New("pixsim: the payload certificate's key cannot sign")
	}
	sum := sha256.Sum256(cert.Certificate[0])
	thumb := b64(sum[:])
	j := &jwsSigner{key: key, jwk: map[string]any{"use": "sig", "kid": thumb, "x5t#S256": thumb}}
	var chain []string
	for _, der := range cert.Certificate {
		chain = append(chain, base64.StdEncoding.EncodeToString(der))
	}
	j.jwk["x5c"] = chain
	switch k := key.Public().(type) {
	case *ecdsa.PublicKey:
		if k.Curve != elliptic.P256() {
			return nil, errors.New("pixsim: an ECDSA payload key must be P-256 (ES256)")
		}
		raw, err := k.Bytes() // 0x04 || X || Y
		if err != nil {
			return nil, err
		}
		j.alg = "ES256"
		j.jwk["kty"], j.jwk["crv"], j.jwk["x"], j.jwk["y"] = "EC", "P-256", b64(raw[1:33]), b64(raw[33:])
	case *rsa.PublicKey:
		j.alg = "RS256"
		j.jwk["kty"], j.jwk["n"], j.jwk["e"] = "RSA", b64(k.N.Bytes()), b64(big.NewInt(int64(k.E)).Bytes())
	default:
		return nil, fmt.Errorf("pixsim: a payload key of type %T cannot sign ES256 or RS256", k)
	}
	j.jwk["alg"] = j.alg
	hdr, err := json.Marshal(map[string]string{"alg": j.alg, "typ": "JWS", "kid": thumb, "jku": jku, "x5t#S256": thumb})
	if err != nil {
		return nil, err
	}
	j.header = b64(hdr)
	return j, nil
}

// sign is v's JSON as a compact JWS.
func (j *jwsSigner) sign(v any) (string, error) {
	body, err := json.Marshal(v)
	if err != nil {
		return "", err
	}
	input := j.header + "." + b64(body)
	sum := sha256.Sum256([]byte(input))
	sig, err := j.key.Sign(rand.Reader, sum[:], crypto.SHA256)
	if err != nil {
		return "", err
	}
	if j.alg == "ES256" {
		// The key signs ASN.1 (r, s); JWS takes r and s as 32 bytes each.
		var rs struct{ R, S *big.Int }
		if _, err := asn1.Unmarshal(sig, &rs); err != nil {
			return "", err
		}
		sig = make([]byte, 64)
		rs.R.FillBytes(sig[:32])
		rs.S.FillBytes(sig[32:])
	}
	return input + "." + b64(sig), nil
}

func b64(b []byte) string { return base64.RawURLEncoding.EncodeToString(b) }

// pemBlock is the DER of the first PEM block of p, nil when none.
func pemBlock(p []byte) []byte {
	if block, _ := pem.Decode(p); block != nil {
		return block.Bytes
	}
	return nil
}
