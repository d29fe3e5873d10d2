package pixsim

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/url"
	"strings"
)

// The receiver's two Pix Automático webhooks: PUT, GET and DELETE
// /webhookrec and /webhookcobr. Callbacks are POST <webhookUrl>/rec with
// {"recs": [RecNotification]} when a recurrence changes status after its
// creation, and POST <webhookUrl>/cobr with {"cobsr": [CobRNotification]}
// when a recurring charge or one of its attempts does.

// RecNotification is a recurrence as a webhookrec callback carries it.
type RecNotification struct {
	IDRec        string        `json:"idRec"`
	Status       string        `json:"status"`
	Atualizacao  []Atualizacao `json:"atualizacao"`
	Encerramento *Encerramento `json:"encerramento,omitempty"`
	Ativacao     RecAtivacao   `json:"ativacao"`
}

// CobRNotification is a recurring charge as a webhookcobr callback carries it.
type CobRNotification struct {
	IDRec        string        `json:"idRec"`
	TxID         string        `json:"txid"`
	Status       string        `json:"status"`
	Atualizacao  []Atualizacao `json:"atualizacao"`
	Encerramento *Encerramento `json:"encerramento,omitempty"`
	Tentativas   []Tentativa   `json:"tentativas,omitempty"`
	Pix          []*Pix        `json:"pix,omitempty"`
}

// WebhookRecord is a registered Pix Automático webhook as GET answers it.
type WebhookRecord struct {
	WebhookURL string `json:"webhookUrl"`
	Criacao    string `json:"criacao"`
}

// hookOf is the slot of the webhook the request's path names.
func (s *Server) hookOf(r *http.Request) (**webhook, string) {
	if strings.HasPrefix(r.URL.Path, "/webhookcobr") {
		return &s.auto.hookCobR, ProblemWebhookCobRInvalid
	}
	return &s.auto.hookRec, ProblemWebhookRecInvalid
}

func (s *Server) putWebhookAuto(w http.ResponseWriter, r *http.Request) {
	var req struct {
		WebhookURL string `json:"webhookUrl"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, typ := s.hookOf(r)
	u, err := url.Parse(req.WebhookURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		problem(w, http.StatusBadRequest, typ, "Webhook inválido.", "O campo webhookUrl não respeita o schema.",
			Violacao{Razao: "URL inválida", Propriedade: "webhookUrl"})
		return
	}
	*slot = &webhook{URL: req.WebhookURL, Criacao: s.now()}
	w.WriteHeader(http.StatusOK)
}

func (s *Server) getWebhookAuto(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, _ := s.hookOf(r)
	if *slot == nil {
		problem(w, http.StatusNotFound, ProblemNotFound, "Não Encontrado", "nenhum webhook configurado")
		return
	}
	writeJSON(w, http.StatusOK, WebhookRecord{WebhookURL: (*slot).URL, Criacao: stamp((*slot).Criacao)})
}

func (s *Server) deleteWebhookAuto(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	slot, _ := s.hookOf(r)
	if *slot == nil {
		problem(w, http.StatusNotFound, ProblemNotFound, "Não Encontrado", "nenhum webhook configurado")
		return
	}
	*slot = nil
	w.WriteHeader(http.StatusNoContent)
}

// WebhookRec and WebhookCobR return the registered URLs ("" for none).
func (s *Server) WebhookRec() string  { return s.hookURL(&s.auto.hookRec) }
func (s *Server) WebhookCobR() string { return s.hookURL(&s.auto.hookCobR) }

func (s *Server) hookURL(slot **webhook) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	if *slot == nil {
		return ""
	}
	return (*slot).URL
}

// notifyRecLocked queues the webhookrec callback with rec as it stands.
func (s *Server) notifyRecLocked(rec *recRecord) {
	if s.auto.hookRec == nil {
		return
	}
	v := s.recViewLocked(rec, false)
	n := RecNotification{IDRec: v.IDRec, Status: v.Status, Atualizacao: v.Atualizacao, Encerramento: v.Encerramento, Ativacao: v.Ativacao}
	body, _ := json.Marshal(map[string]any{"recs": []RecNotification{n}})
	s.auto.outbox = append(s.auto.outbox, callbackOut{target: strings.TrimRight(s.auto.hookRec.URL, "/") + "/rec",
		mode: s.cbMode, cause: CauseRec, ids: []string{v.IDRec}, body: body})
}

// notifyCobRLocked queues the webhookcobr callback with c as it stands.
func (s *Server) notifyCobRLocked(c *cobrRecord) {
	if s.auto.hookCobR == nil {
		return
	}
	v := cobrView(c)
	n := CobRNotification{IDRec: v.IDRec, TxID: v.TxID, Status: v.Status, Atualizacao: v.Atualizacao,
		Encerramento: v.Encerramento, Tentativas: v.Tentativas, Pix: v.Pix}
	body, _ := json.Marshal(map[string]any{"cobsr": []CobRNotification{n}})
	s.auto.outbox = append(s.auto.outbox, callbackOut{target: strings.TrimRight(s.auto.hookCobR.URL, "/") + "/cobr",
		mode: s.cbMode, cause: CauseCobR, ids: []string{v.TxID}, body: body})
}

// deliverLater posts callbacks in the background, in order.
func (s *Server) deliverLater(out []callbackOut) {
	if len(out) == 0 {
		return
	}
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.deliver(context.Background(), out)
	}()
}

// deliver posts callbacks in order before it returns, over the callback
// client (which presents CallbackCert), honouring each one's mode: dropped
// ones are only recorded, duplicated ones sent twice.
func (s *Server) deliver(ctx context.Context, out []callbackOut) {
	for _, cb := range out {
		if cb.mode == CallbacksDrop {
			s.mu.Lock()
			s.delivered = append(s.delivered, Callback{URL: cb.target, IDs: cb.ids, Cause: cb.cause, Dropped: true})
			s.mu.Unlock()
			continue
		}
		n := 1
		if cb.mode == CallbacksDuplicate {
			n = 2
		}
		for range n {
			status := 0
			req, err := http.NewRequestWithContext(ctx, http.MethodPost, cb.target, bytes.NewReader(cb.body))
			if err == nil {
				req.Header.Set("Content-Type", "application/json")
				if resp, err := s.cfg.Callbacks.Do(req); err == nil {
					status = resp.StatusCode
					_ = resp.Body.Close()
				}
			}
			s.mu.Lock()
			s.delivered = append(s.delivered, Callback{URL: cb.target, IDs: cb.ids, Cause: cb.cause, Status: status})
			s.mu.Unlock()
		}
	}
}
