package pixsim

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"math/big"
	"net/http"
	"net/url"
	"strconv"
	"strings"
)

// locRecViewLocked is a location as its answers show it.
func (s *Server) locRecViewLocked(l *locRecRecord) LocRec {
	return LocRec{ID: l.id, Location: s.recLocation(l.token), Tipo: "rec", Criacao: stamp(l.at), IDRec: l.idRec}
}

// recLocation is the URL (without scheme) a recurrence's payload is served
// at: GET /rec/{recUrlAccessToken} under Config.LocationHost.
func (s *Server) recLocation(token string) string { return s.cfg.LocationHost + "/rec/" + token }

// recPayloadPrefix is the path Config.LocationHost puts before /rec/ ("/qr/v2"
// by default, "" when the host has no path).
func (s *Server) recPayloadPrefix() string {
	u, err := url.Parse("https://" + s.cfg.LocationHost)
	if err != nil {
		return ""
	}
	return strings.TrimRight(u.Path, "/")
}

func (s *Server) postLocRec(w http.ResponseWriter, _ *http.Request) {
	defer s.lockAuto()()
	s.auto.nextLoc++
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	l := &locRecRecord{id: s.auto.nextLoc, token: hex.EncodeToString(b), at: s.now()}
	s.auto.locs[l.id] = l
	s.auto.locByToken[l.token] = l.id
	out := s.locRecViewLocked(l)
	w.Header().Set("Location", out.Location)
	writeJSON(w, http.StatusCreated, out)
}

// findLocRecLocked is the location of the request's {id}, or nil after
// answering 404.
func (s *Server) findLocRecLocked(w http.ResponseWriter, r *http.Request) *locRecRecord {
	id, err := strconv.ParseInt(r.PathValue("id"), 10, 64)
	l, ok := s.auto.locs[id]
	if err != nil || !ok {
		problem(w, http.StatusNotFound, ProblemLocRecNotFound, "Location não encontrada.", "location não encontrada para o id informado")
		return nil
	}
	return l
}

func (s *Server) getLocRec(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	if l := s.findLocRecLocked(w, r); l != nil {
		writeJSON(w, http.StatusOK, s.locRecViewLocked(l))
	}
}

// deleteLocRecIDRec unlinks the location's recurrence: neither shows the
// other afterwards, and the recurrence keeps its status.
func (s *Server) deleteLocRecIDRec(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	l := s.findLocRecLocked(w, r)
	if l == nil {
		return
	}
	if rec, ok := s.auto.recs[l.idRec]; ok {
		rec.locID = 0
	}
	l.idRec = ""
	writeJSON(w, http.StatusOK, s.locRecViewLocked(l))
}

// locRecPage is the GET /locrec answer.
type locRecPage struct {
	Parametros ListParametros `json:"parametros"`
	Loc        []LocRec       `json:"loc"`
}

func (s *Server) listLocRec(w http.ResponseWriter, r *http.Request) {
	lq, ok := s.parseListQuery(w, r, ProblemLocRecQuery, "convenio", "idRecPresente")
	if !ok {
		return
	}
	defer s.lockAuto()()
	all := []LocRec{}
	for id := int64(1); id <= s.auto.nextLoc; id++ {
		l := s.auto.locs[id]
		if l == nil || !lq.within(l.at) {
			continue
		}
		if p := lq.params.IDRecPresente; p != nil && *p != (l.idRec != "") {
			continue
		}
		if c := lq.params.Recebedor; c != nil && (l.idRec == "" || s.auto.recs[l.idRec].cur.Recebedor.Convenio != c.Convenio) {
			continue
		}
		all = append(all, s.locRecViewLocked(l))
	}
	lo, hi := lq.pageOf(len(all))
	writeJSON(w, http.StatusOK, locRecPage{Parametros: lq.params, Loc: all[lo:hi]})
}

// handleRecAndPayload routes GET /rec/{idRec}, the payload locations
// (GET <path of Config.LocationHost>/rec/{recUrlAccessToken}, open to any
// client) and the key set their JWS is signed with (…/rec/jwks.json).
func (s *Server) handleRecAndPayload(m *http.ServeMux) {
	p := s.recPayloadPrefix()
	if p == "" {
		m.HandleFunc("GET /rec/{idRec}", s.recOrPayload())
	} else {
		m.HandleFunc("GET /rec/{idRec}", s.auth(s.getRec))
		m.HandleFunc("GET "+p+"/rec/{recUrlAccessToken}", s.public(s.getRecPayload))
	}
	m.HandleFunc("GET "+p+"/rec/jwks.json", s.public(s.getRecJWKS))
}

// recOrPayload serves GET /rec/{x} when the payload location shares the
// API's path (Config.LocationHost without a path): a location's token is
// its payload, anything else the recurrence idRec names.
func (s *Server) recOrPayload() http.HandlerFunc {
	get := s.auth(s.getRec)
	return func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		_, isLoc := s.auto.locByToken[r.PathValue("idRec")]
		s.mu.Unlock()
		if isLoc {
			r.SetPathValue("recUrlAccessToken", r.PathValue("idRec"))
			s.public(s.getRecPayload)(w, r)
			return
		}
		get(w, r)
	}
}

// public wraps an endpoint open to any client (a payload location): no
// token, but the PSP can be down.
func (s *Server) public(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() {
			s.unavailable(w)
			return
		}
		h(w, r)
	}
}

// getRecPayload serves the recurrence at a location as a signed JWS
// (application/jose) whose payload is the RecPayload. A location without a
// recurrence is 404 RecPayloadNaoEncontrado; a recurrence that ended
// (EXPIRADA, REJEITADA, CANCELADA) is 400 RecPayloadOperacaoInvalida.
func (s *Server) getRecPayload(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	id, ok := s.auto.locByToken[r.PathValue("recUrlAccessToken")]
	var rec *recRecord
	if ok {
		rec = s.auto.recs[s.auto.locs[id].idRec]
	}
	if rec == nil {
		problem(w, http.StatusNotFound, ProblemRecPayloadNotFound, "Recorrência não encontrada.", "nenhuma recorrência nesta location")
		return
	}
	switch rec.cur.Status {
	case RecExpirada, RecRejeitada, RecCancelada:
		problem(w, http.StatusBadRequest, ProblemRecPayloadInvalid, "Recorrência inválida.",
			"A recorrência em questão encontra-se expirada, cancelada ou rejeitada.",
			Violacao{Razao: "recorrência " + strings.ToLower(rec.cur.Status), Propriedade: "recUrlAccessToken"})
		return
	}
	body, err := json.Marshal(s.recPayloadLocked(rec))
	if err == nil {
		var jws string
		if jws, err = s.signLocked(body); err == nil {
			w.Header().Set("Content-Type", "application/jose")
			w.WriteHeader(http.StatusOK)
			_, _ = w.Write([]byte(jws))
			return
		}
	}
	problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
}

// recPayloadLocked is what the payer's PSP reads of rec.
func (s *Server) recPayloadLocked(rec *recRecord) RecPayload {
	v := s.recViewLocked(rec, false)
	v.Recebedor.ISPBParticipante = s.cfg.ISPB
	return RecPayload{IDRec: v.IDRec, Vinculo: v.Vinculo, Calendario: v.Calendario, Valor: v.Valor, Recebedor: v.Recebedor,
		PoliticaRetentativa: v.PoliticaRetentativa, Atualizacao: v.Atualizacao}
}

var b64 = base64.RawURLEncoding

// signLocked is a compact JWS (RS256) of payload under the simulator's key,
// made on first use; the header names the key (kid) and where its JWKS is
// served (jku).
func (s *Server) signLocked(payload []byte) (string, error) {
	if err := s.jwsKeyLocked(); err != nil {
		return "", err
	}
	header, _ := json.Marshal(map[string]string{"alg": "RS256", "typ": "JWT", "kid": s.auto.jwsKeyID,
		"jku": "https://" + s.cfg.LocationHost + "/rec/jwks.json"})
	signing := b64.EncodeToString(header) + "." + b64.EncodeToString(payload)
	sum := sha256.Sum256([]byte(signing))
	sig, err := rsa.SignPKCS1v15(rand.Reader, s.auto.jwsKey, crypto.SHA256, sum[:])
	if err != nil {
		return "", err
	}
	return signing + "." + b64.EncodeToString(sig), nil
}

func (s *Server) jwsKeyLocked() error {
	if s.auto.jwsKey != nil {
		return nil
	}
	k, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return err
	}
	sum := sha256.Sum256(k.N.Bytes())
	s.auto.jwsKey, s.auto.jwsKeyID = k, b64.EncodeToString(sum[:12])
	return nil
}

// getRecJWKS serves the public key payloads are signed with, as a JWK set.
func (s *Server) getRecJWKS(w http.ResponseWriter, _ *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.jwsKeyLocked(); err != nil {
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
		return
	}
	pub := s.auto.jwsKey.PublicKey
	writeJSON(w, http.StatusOK, map[string]any{"keys": []map[string]string{{"kty": "RSA", "use": "sig", "alg": "RS256",
		"kid": s.auto.jwsKeyID, "n": b64.EncodeToString(pub.N.Bytes()), "e": b64.EncodeToString(big.NewInt(int64(pub.E)).Bytes())}}})
}

// RecPayloadKey is the public key payload locations are signed with, for
// tests that check the JWS.
func (s *Server) RecPayloadKey() (*rsa.PublicKey, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if err := s.jwsKeyLocked(); err != nil {
		return nil, err
	}
	return &s.auto.jwsKey.PublicKey, nil
}
