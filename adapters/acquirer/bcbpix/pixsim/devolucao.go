package pixsim

import (
	"crypto/rand"
	"encoding/json"
	"net/http"
	"regexp"
	"time"

	"github.com/quitapix/quita/domain"
)

var returnIDRE = regexp.MustCompile(`^[a-zA-Z0-9]{1,35}$`)

// returnWindow is how long after a Pix a devolução may still be asked.
const returnWindow = 90 * 24 * time.Hour

func (s *Server) putReturn(w http.ResponseWriter, r *http.Request) {
	e2e, id := r.PathValue("e2eid"), r.PathValue("id")
	var req struct {
		Valor     string `json:"valor"`
		Natureza  string `json:"natureza"`
		Descricao string `json:"descricao"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	invalid := func(detail string, v ...Violacao) {
		problem(w, http.StatusBadRequest, ProblemReturnInvalid, "Devolução inválida.", detail, v...)
	}
	amount, err := domain.ParseDecimal(req.Valor)
	switch {
	case !returnIDRE.MatchString(id):
		invalid("id inválido", Violacao{Razao: "id não respeita o schema", Propriedade: "id"})
		return
	case err != nil || amount <= 0:
		invalid("valor inválido", Violacao{Razao: "valor não respeita o schema", Propriedade: "devolucao.valor"})
		return
	case len([]rune(req.Descricao)) > 140:
		invalid("descricao longa demais", Violacao{Razao: "máximo de 140 caracteres", Propriedade: "devolucao.descricao"})
		return
	}
	if req.Natureza == "" {
		req.Natureza = "ORIGINAL"
	}
	if req.Natureza != "ORIGINAL" && req.Natureza != "RETIRADA" {
		invalid("natureza inválida", Violacao{Razao: "natureza não respeita o schema", Propriedade: "devolucao.natureza"})
		return
	}
	s.mu.Lock()
	p, ok := s.pix[e2e]
	if !ok {
		s.mu.Unlock()
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	var total int64
	for _, d := range p.Devolucoes {
		if d.ID == id {
			out := *d
			s.mu.Unlock()
			// The same request again (a lost answer) is the same
			// devolução; another request may not reuse its id.
			if d.amount != amount {
				invalid("id já utilizado por outra devolução deste Pix")
				return
			}
			writeJSON(w, http.StatusCreated, out)
			return
		}
		if d.Status != ReturnFailed {
			total += d.amount
		}
	}
	now := s.now()
	switch {
	case total+amount > p.amount:
		s.mu.Unlock()
		invalid("a soma das devoluções excederia o valor do Pix")
		return
	case now.Sub(p.at) > returnWindow:
		s.mu.Unlock()
		invalid("prazo de 90 dias para devolução excedido")
		return
	}
	rtr, _ := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	d := &Devolucao{ID: id, RtrID: "D" + rtr[1:], Valor: req.Valor, Natureza: req.Natureza, Descricao: req.Descricao,
		Status: ReturnProcessing, amount: amount, fail: s.failNext > 0, at: now}
	s.failNext = max(s.failNext-1, 0)
	d.Horario.Solicitacao = stamp(now)
	p.Devolucoes = append(p.Devolucoes, d)
	out := *d
	s.mu.Unlock()
	writeJSON(w, http.StatusCreated, out)
	s.settleLater(e2e)
}

// settleLater settles the Pix's devoluções after ReturnDelay, as the PSP
// does on its own once the payer's bank answers, and calls the webhook.
func (s *Server) settleLater(e2e string) {
	s.later(s.cfg.ReturnDelay, func() {
		if p, ok := s.pix[e2e]; ok && s.settleLocked(p, true) {
			s.notifyLocked(p, CauseDevolucao)
		}
	})
}

// later runs fn under the lock after delay, in the background, unless the
// server closes first.
func (s *Server) later(delay time.Duration, fn func()) {
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		t := time.NewTimer(delay)
		defer t.Stop()
		select {
		case <-s.closed:
			return
		case <-t.C:
		}
		s.mu.Lock()
		defer s.mu.Unlock()
		fn()
	}()
}

// settleLocked ends the devoluções of p still EM_PROCESSAMENTO: all of
// them when force, else those older than ReturnDelay. It reports whether
// any reached a final status (then the webhook is due).
func (s *Server) settleLocked(p *Pix, force bool) bool {
	changed := false
	now := s.now()
	for _, d := range p.Devolucoes {
		if d.Status != ReturnProcessing || (!force && now.Before(d.at.Add(s.cfg.ReturnDelay))) {
			continue
		}
		changed = true
		if d.fail {
			d.Status, d.Motivo = ReturnFailed, "devolução recusada pelo PSP do pagador"
			continue
		}
		d.Status = ReturnDone
		d.Horario.Liquidacao = stamp(now)
	}
	return changed
}

func (s *Server) getReturn(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	p, ok := s.pix[r.PathValue("e2eid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemPixNotFound, "Pix não encontrado.", "")
		return
	}
	if s.settleLocked(p, false) {
		s.notifyLocked(p, CauseDevolucao)
	}
	for _, d := range p.Devolucoes {
		if d.ID == r.PathValue("id") {
			writeJSON(w, http.StatusOK, d)
			return
		}
	}
	problem(w, http.StatusNotFound, ProblemReturnNotFound, "Devolução não encontrada.", "")
}
