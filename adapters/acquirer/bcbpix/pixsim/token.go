package pixsim

import (
	"crypto/rand"
	"crypto/subtle"
	"encoding/base64"
	"net/http"
	"strings"
	"time"
)

func (s *Server) unavailable(w http.ResponseWriter) {
	problem(w, http.StatusServiceUnavailable, ProblemUnavailable, "Serviço Indisponível", "o PSP está indisponível")
}

func randomToken() string {
	b := make([]byte, 24)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// token is the OAuth2 client-credentials endpoint. Its answers carry an
// access token, so no cache may keep them (RFC 6749 §5.1).
func (s *Server) token(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("Cache-Control", "no-store")
	w.Header().Set("Pragma", "no-cache")
	if s.down.Load() {
		s.unavailable(w)
		return
	}
	id, secret, ok := r.BasicAuth()
	if err := r.ParseForm(); err != nil || r.PostForm.Get("grant_type") != "client_credentials" {
		writeJSON(w, http.StatusBadRequest, map[string]string{"error": "unsupported_grant_type"})
		return
	}
	if !ok {
		id, secret = r.PostForm.Get("client_id"), r.PostForm.Get("client_secret")
	}
	if subtle.ConstantTimeCompare([]byte(id), []byte(s.cfg.ClientID)) != 1 ||
		subtle.ConstantTimeCompare([]byte(secret), []byte(s.cfg.ClientSecret)) != 1 {
		writeJSON(w, http.StatusUnauthorized, map[string]string{"error": "invalid_client"})
		return
	}
	tok := randomToken()
	s.mu.Lock()
	s.tokens[tok] = s.now().Add(s.cfg.TokenTTL)
	s.tokenHits++
	s.mu.Unlock()
	writeJSON(w, http.StatusOK, map[string]any{
		"access_token": tok, "token_type": "Bearer", "expires_in": int(s.cfg.TokenTTL / time.Second),
		"scope": "cob.write cob.read pix.read pix.write webhook.read webhook.write",
	})
}

func (s *Server) auth(h http.HandlerFunc) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		if s.down.Load() || s.failCalls.Add(-1) >= 0 {
			s.unavailable(w)
			return
		}
		tok, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
		s.mu.Lock()
		exp, known := s.tokens[tok]
		if ok && known && s.now().Before(exp) {
			s.apiHits++
			s.opHits[r.Pattern]++
		} else {
			known = false
		}
		s.mu.Unlock()
		if !known {
			problem(w, http.StatusUnauthorized, ProblemUnauthorized, "Acesso Negado", "token ausente, inválido ou expirado")
			return
		}
		if s.loseCalls.Add(-1) >= 0 {
			h(discard{}, r)
			s.unavailable(w)
			return
		}
		h(w, r)
	}
}

// discard is a ResponseWriter whose answer never arrives.
type discard struct{}

func (discard) Header() http.Header         { return http.Header{} }
func (discard) Write(b []byte) (int, error) { return len(b), nil }
func (discard) WriteHeader(int)             {}
