package pixsim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// webhook is a receiver's registered callback URL for one Pix key.
type webhook struct {
	URL     string
	Criacao time.Time
}

func (s *Server) putWebhook(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problem(w, http.StatusBadRequest, ProblemWebhookInvalid, "Webhook inválido.", "webhookUrl inválida",
			Violacao{Razao: "URL inválida", Propriedade: "webhook.webhookUrl"})
		return
	}
	chave := r.PathValue("chave")
	if chave == "" || len(chave) > 77 {
		problem(w, http.StatusBadRequest, ProblemWebhookInvalid, "Webhook inválido.", "chave inválida",
			Violacao{Razao: "chave não respeita o schema", Propriedade: "chave"})
		return
	}
	s.mu.Lock()
	s.webhooks[chave] = webhook{URL: req.WebhookURL, Criacao: s.now()}
	s.mu.Unlock()
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	h, ok := s.webhooks[r.PathValue("chave")]
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, ProblemWebhookMissing, "Webhook não encontrado.", "")
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"webhookUrl": h.URL, "chave": r.PathValue("chave"), "criacao": stamp(h.Criacao)})
}

func (s *Server) deleteWebhook(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	_, ok := s.webhooks[r.PathValue("chave")]
	delete(s.webhooks, r.PathValue("chave"))
	s.mu.Unlock()
	if !ok {
		problem(w, http.StatusNotFound, ProblemWebhookMissing, "Webhook não encontrado.", "")
		return
	}
	w.WriteHeader(http.StatusNoContent)
}

// notifyLocked sends, in the background, the callback about p (a Pix
// received, or one of its devoluções ended) when p has a txid and its key
// a webhook: API Pix notifies only Pix tied to a cob.
func (s *Server) notifyLocked(p *Pix, cause string) {
	hook := s.webhooks[p.Chave].URL
	if hook == "" || p.TxID == "" {
		return
	}
	out, mode := copyPix(p), s.cbMode
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.callback(context.Background(), hook, mode, cause, []string{out.EndToEndID}, []Pix{out})
	}()
}

// callback posts {"pix":[...]} to <hook>/pix, as API Pix does, over the
// callback client (which presents CallbackCert).
func (s *Server) callback(ctx context.Context, hook, mode, cause string, ids []string, pix any) {
	target := strings.TrimRight(hook, "/") + "/pix"
	if mode == CallbacksDrop {
		s.mu.Lock()
		s.delivered = append(s.delivered, Callback{URL: target, E2EIDs: ids, Cause: cause, Dropped: true})
		s.mu.Unlock()
		return
	}
	n := 1
	if mode == CallbacksDuplicate {
		n = 2
	}
	body, _ := json.Marshal(map[string]any{"pix": pix})
	for range n {
		status := 0
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, target, bytes.NewReader(body))
		if err == nil {
			req.Header.Set("Content-Type", "application/json")
			if resp, err := s.cfg.Callbacks.Do(req); err == nil {
				status = resp.StatusCode
				_ = resp.Body.Close()
			}
		}
		s.mu.Lock()
		s.delivered = append(s.delivered, Callback{URL: target, E2EIDs: ids, Cause: cause, Status: status})
		s.mu.Unlock()
	}
}
