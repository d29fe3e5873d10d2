package pixsim

import (
	"encoding/json"
	"net/http"
	"regexp"
	"strconv"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
)

var txidRE = regexp.MustCompile(`^[a-zA-Z0-9]{26,35}$`)

// defaultExpiry is the lifetime of a cob whose calendario names none.
const defaultExpiry = 86400

// cobRequest is the body of PUT (every field but status; valor, chave and
// calendario required) and of PATCH (any field; status only alone).
type cobRequest struct {
	Calendario *struct {
		Expiracao *int `json:"expiracao"`
	} `json:"calendario"`
	Devedor *Person `json:"devedor"`
	Valor   *struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              *string `json:"chave"`
	SolicitacaoPagador *string `json:"solicitacaoPagador"`
	Status             string  `json:"status"`
}

// changes reports whether the request alters anything besides status.
func (q *cobRequest) changes() bool {
	return q.Calendario != nil || q.Devedor != nil || q.Valor != nil || q.Chave != nil || q.SolicitacaoPagador != nil
}

// violations checks the request's fields; full is a PUT, where valor,
// chave and calendario must be present.
func (q *cobRequest) violations(full bool) []Violacao {
	var v []Violacao
	if full {
		if q.Valor == nil {
			v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: "cob.valor.original"})
		}
		if q.Chave == nil {
			v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: "cob.chave"})
		}
		if q.Calendario == nil {
			v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: "cob.calendario"})
		}
	}
	if q.Valor != nil {
		a, err := domain.ParseDecimal(q.Valor.Original)
		if err != nil || a <= 0 || !strings.Contains(q.Valor.Original, ".") || len(q.Valor.Original) < 4 {
			v = append(v, Violacao{Razao: "valor não respeita o schema", Propriedade: "cob.valor.original"})
		}
	}
	if q.Chave != nil && (*q.Chave == "" || len(*q.Chave) > 77) {
		v = append(v, Violacao{Razao: "chave não respeita o schema", Propriedade: "cob.chave"})
	}
	if q.SolicitacaoPagador != nil && len([]rune(*q.SolicitacaoPagador)) > 140 {
		v = append(v, Violacao{Razao: "máximo de 140 caracteres", Propriedade: "cob.solicitacaoPagador"})
	}
	if d := q.Devedor; d != nil {
		switch {
		case (d.CPF == "") == (d.CNPJ == ""):
			v = append(v, Violacao{Razao: "informe cpf ou cnpj", Propriedade: "cob.devedor"})
		case d.CPF != "" && !domain.ValidCPF(d.CPF), d.CNPJ != "" && !domain.ValidCNPJ(d.CNPJ):
			v = append(v, Violacao{Razao: "documento inválido", Propriedade: "cob.devedor"})
		case d.Nome == "":
			v = append(v, Violacao{Razao: "nome obrigatório com cpf/cnpj", Propriedade: "cob.devedor.nome"})
		}
	}
	if q.Calendario != nil && q.Calendario.Expiracao != nil && *q.Calendario.Expiracao <= 0 {
		v = append(v, Violacao{Razao: "expiracao deve ser positiva", Propriedade: "cob.calendario.expiracao"})
	}
	return v
}

// decodeCob reads a PUT (full) or PATCH body and answers 400 when it
// breaks a rule; it reports whether the request may go on.
func decodeCob(w http.ResponseWriter, r *http.Request, req *cobRequest, full bool) bool {
	if err := json.NewDecoder(r.Body).Decode(req); err != nil {
		badJSON(w)
		return false
	}
	v := req.violations(full)
	switch {
	case full && req.Status != "":
		v = append(v, Violacao{Razao: "status não é aceito na criação", Propriedade: "cob.status"})
	case req.Status != "" && req.Status != CobRemoved:
		v = append(v, Violacao{Razao: "status só aceita REMOVIDA_PELO_USUARIO_RECEBEDOR", Propriedade: "cob.status"})
	case req.Status != "" && req.changes():
		v = append(v, Violacao{Razao: "remoção não se combina com outras alterações", Propriedade: "cob.status"})
	}
	if len(v) > 0 {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "A requisição não respeita o schema.", v...)
		return false
	}
	return true
}

// apply writes the request's fields on c and reports whether any changed.
// A PUT replaces the whole cob: its absent optional fields are cleared.
func (q *cobRequest) apply(c *Cob, full bool) bool {
	before, _ := json.Marshal(c)
	if q.Calendario != nil {
		switch {
		case q.Calendario.Expiracao != nil:
			c.Calendario.Expiracao = *q.Calendario.Expiracao
		case full:
			c.Calendario.Expiracao = defaultExpiry
		}
	}
	if q.Valor != nil {
		c.Valor.Original = q.Valor.Original
	}
	if q.Chave != nil {
		c.Chave = *q.Chave
	}
	if q.Devedor != nil || full {
		c.Devedor = q.Devedor
	}
	if q.SolicitacaoPagador != nil {
		c.SolicitacaoPagador = *q.SolicitacaoPagador
	} else if full {
		c.SolicitacaoPagador = ""
	}
	after, _ := json.Marshal(c)
	return string(before) != string(after)
}

func (s *Server) putCob(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	if !txidRE.MatchString(txid) {
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "txid inválido",
			Violacao{Razao: "txid não respeita o schema", Propriedade: "txid"})
		return
	}
	var req cobRequest
	if !decodeCob(w, r, &req, true) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, ok := s.cobs[txid]; ok {
		// An existing cob is revised while it is ATIVA, refused after.
		s.expireLocked(rec)
		if rec.cur.Status != CobActive {
			problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.",
				"a cobrança já existe e não está ATIVA: não pode ser alterada")
			return
		}
		s.reviseLocked(rec, &req, true)
		writeJSON(w, http.StatusCreated, rec.view())
		return
	}
	now := s.now()
	rec := &cobRecord{at: now}
	c := &rec.cur
	c.TxID, c.Status = txid, CobActive
	c.Calendario.Criacao = stamp(now)
	req.apply(c, true)
	s.locs++
	loc := s.cfg.LocationHost + "/cobv2/" + txid
	c.Loc = &Loc{ID: s.locs, TxID: txid, Location: loc, TipoCob: "cob", Criacao: stamp(now)}
	c.Locat = loc
	code, err := brcode.NewDynamic(loc, "PIXSIM RECEBEDOR", "SAO PAULO")
	if err != nil {
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
		return
	}
	c.PixCopiaECola = code
	rec.revs = []Cob{rec.view()}
	s.cobs[txid] = rec
	writeJSON(w, http.StatusCreated, rec.view())
}

// reviseLocked applies a revision; revisao moves only when something
// changed, and each revision is kept for GET ?revisao=n.
func (s *Server) reviseLocked(rec *cobRecord, req *cobRequest, full bool) {
	if req.apply(&rec.cur, full) {
		rec.cur.Revisao++
		rec.revs = append(rec.revs, rec.view())
	}
}

// expireLocked moves a cob past its expiry to REMOVIDA_PELO_PSP.
func (s *Server) expireLocked(rec *cobRecord) {
	c := &rec.cur
	if c.Status != CobActive {
		return
	}
	if !s.now().Before(rec.at.Add(time.Duration(c.Calendario.Expiracao) * time.Second)) {
		c.Status = CobRemovedBy
	}
}

func (s *Server) getCob(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.cobs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobNotFound, "Cobrança não encontrada.", "")
		return
	}
	s.expireLocked(rec)
	if q := r.URL.Query().Get("revisao"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 || n >= len(rec.revs) {
			problem(w, http.StatusBadRequest, ProblemCobQuery, "Consulta inválida.", "revisão inexistente para a cobrança",
				Violacao{Razao: "revisão inexistente", Propriedade: "revisao"})
			return
		}
		writeJSON(w, http.StatusOK, rec.revs[n])
		return
	}
	writeJSON(w, http.StatusOK, rec.view())
}

func (s *Server) patchCob(w http.ResponseWriter, r *http.Request) {
	var req cobRequest
	if !decodeCob(w, r, &req, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.cobs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobNotFound, "Cobrança não encontrada.", "")
		return
	}
	s.expireLocked(rec)
	c := &rec.cur
	switch {
	case req.Status == CobRemoved && c.Status == CobRemoved:
		// Removing twice is the same removal.
	case c.Status != CobActive && (req.Status != "" || req.changes()):
		problem(w, http.StatusBadRequest, ProblemCobInvalid, "Cobrança inválida.", "a cobrança não está ATIVA")
		return
	case req.Status == CobRemoved:
		c.Status = CobRemoved
		c.Revisao++
		rec.revs = append(rec.revs, rec.view())
	default:
		s.reviseLocked(rec, &req, false)
	}
	writeJSON(w, http.StatusOK, rec.view())
}
