package pixsim

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"strconv"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/cobv"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/domain/brcode"
)

// The cobv problem types.
const (
	ProblemCobVInvalid  = problemBase + "CobVOperacaoInvalida"
	ProblemCobVNotFound = problemBase + "CobVNaoEncontrada"
	ProblemCobVQuery    = problemBase + "CobVConsultaInvalida"
)

// Recebedor is the receiving merchant a cobv names (DadosRecebedor).
type Recebedor struct {
	CNPJ       string `json:"cnpj"`
	Nome       string `json:"nome"`
	Logradouro string `json:"logradouro"`
	Cidade     string `json:"cidade"`
	UF         string `json:"uf"`
	CEP        string `json:"cep"`
}

// simRecebedor is the merchant every pixsim cobv is received by.
var simRecebedor = Recebedor{CNPJ: "11222333000181", Nome: "PIXSIM RECEBEDOR", Logradouro: "Avenida Paulista, 1000",
	Cidade: "SAO PAULO", UF: "SP", CEP: "01310100"}

// CobV is a due-date charge as the PSP answers it (API Pix "CobVCompleta").
type CobV struct {
	Calendario         cobv.Calendario `json:"calendario"`
	TxID               string          `json:"txid"`
	Revisao            int             `json:"revisao"`
	Loc                *Loc            `json:"loc,omitempty"`
	Locat              string          `json:"location"`
	Status             string          `json:"status"`
	Devedor            Person          `json:"devedor"`
	Recebedor          Recebedor       `json:"recebedor"`
	Valor              cobv.Valor      `json:"valor"`
	Chave              string          `json:"chave"`
	SolicitacaoPagador string          `json:"solicitacaoPagador,omitempty"`
	PixCopiaECola      string          `json:"pixCopiaECola"`
	Pix                []*Pix          `json:"pix,omitempty"`
}

// cobvRequest is the body of PUT (calendario, devedor, valor and chave
// required) and of PATCH (any of them; status only alone).
type cobvRequest struct {
	Calendario         *cobv.Calendario `json:"calendario"`
	Devedor            *Person          `json:"devedor"`
	Valor              *cobv.Valor      `json:"valor"`
	Chave              *string          `json:"chave"`
	SolicitacaoPagador *string          `json:"solicitacaoPagador"`
	Status             string           `json:"status"`

	// members are the members of calendario and valor the body holds,
	// null or not: a PATCH changes those only (a JSON merge patch of
	// each, a rule replaced whole or removed by null).
	members struct {
		Calendario map[string]json.RawMessage `json:"calendario"`
		Valor      map[string]json.RawMessage `json:"valor"`
	}
}

func (q *cobvRequest) changes() bool {
	return q.Calendario != nil || q.Devedor != nil || q.Valor != nil || q.Chave != nil || q.SolicitacaoPagador != nil
}

// cobvRecord is a cobv, its revisions (GET ?revisao=n) and its terms.
type cobvRecord struct {
	cur     CobV
	revs    []CobV
	created bizdays.Date
	terms   domain.DueTerms
}

func (r *cobvRecord) view() CobV {
	out := r.cur
	out.Loc, out.Pix = copyLoc(r.cur.Loc), copyPixes(r.cur.Pix)
	return out
}

// brasilia is the time zone of the API Pix's dates.
var brasilia = func() *time.Location {
	loc, err := time.LoadLocation("America/Sao_Paulo")
	if err != nil {
		return time.FixedZone("BRT", -3*60*60)
	}
	return loc
}()

// today is the day of t in Brasília.
func today(t time.Time) bizdays.Date { return bizdays.DateOf(t.In(brasilia)) }

// violations checks a cobv request; full is a PUT.
func (q *cobvRequest) violations(full bool) []Violacao {
	var v []Violacao
	if full {
		for name, missing := range map[string]bool{"cobv.calendario.dataDeVencimento": q.Calendario == nil,
			"cobv.devedor": q.Devedor == nil, "cobv.valor.original": q.Valor == nil, "cobv.chave": q.Chave == nil} {
			if missing {
				v = append(v, Violacao{Razao: "campo obrigatório", Propriedade: name})
			}
		}
	}
	if q.Chave != nil && (*q.Chave == "" || len(*q.Chave) > 77) {
		v = append(v, Violacao{Razao: "chave não respeita o schema", Propriedade: "cobv.chave"})
	}
	if q.SolicitacaoPagador != nil && len([]rune(*q.SolicitacaoPagador)) > 140 {
		v = append(v, Violacao{Razao: "máximo de 140 caracteres", Propriedade: "cobv.solicitacaoPagador"})
	}
	if d := q.Devedor; d != nil {
		switch {
		case (d.CPF == "") == (d.CNPJ == ""):
			v = append(v, Violacao{Razao: "informe cpf ou cnpj", Propriedade: "cobv.devedor"})
		case d.CPF != "" && !domain.ValidCPF(d.CPF), d.CNPJ != "" && !domain.ValidCNPJ(d.CNPJ):
			v = append(v, Violacao{Razao: "documento inválido", Propriedade: "cobv.devedor"})
		case d.Nome == "":
			v = append(v, Violacao{Razao: "nome obrigatório", Propriedade: "cobv.devedor.nome"})
		}
	}
	switch {
	case full && q.Status != "":
		v = append(v, Violacao{Razao: "status não é aceito na criação", Propriedade: "cobv.status"})
	case q.Status != "" && q.Status != CobRemoved:
		v = append(v, Violacao{Razao: "status só aceita REMOVIDA_PELO_USUARIO_RECEBEDOR", Propriedade: "cobv.status"})
	case q.Status != "" && q.changes():
		v = append(v, Violacao{Razao: "remoção não se combina com outras alterações", Propriedade: "cobv.status"})
	}
	return v
}

// apply writes q on r (a PUT replaces calendario and valor whole and the
// optional fields it omits; a PATCH changes only the members of
// calendario and valor it names), checks the resulting terms, and
// reports whether anything changed; a cobv whose terms break a rule is
// left as it was.
func (r *cobvRecord) apply(q *cobvRequest, full bool) (bool, []Violacao) {
	next := r.cur
	switch {
	case q.Calendario != nil && full:
		next.Calendario.DataDeVencimento = q.Calendario.DataDeVencimento
		next.Calendario.ValidadeAposVencimento = q.Calendario.ValidadeAposVencimento
	case q.Calendario != nil:
		mergeCalendario(&next.Calendario, *q.Calendario, q.members.Calendario)
	}
	if q.Devedor != nil {
		next.Devedor = *q.Devedor
	}
	switch {
	case q.Valor != nil && full:
		next.Valor = *q.Valor
	case q.Valor != nil:
		mergeValor(&next.Valor, *q.Valor, q.members.Valor)
	}
	if q.Chave != nil {
		next.Chave = *q.Chave
	}
	switch {
	case q.SolicitacaoPagador != nil:
		next.SolicitacaoPagador = *q.SolicitacaoPagador
	case full:
		next.SolicitacaoPagador = ""
	}
	terms, err := cobv.Decode(r.created, next.Calendario, next.Valor)
	if err != nil {
		return false, []Violacao{{Razao: err.Error(), Propriedade: "cobv.valor"}}
	}
	// The answer states validadeAposVencimento (30 when not sent).
	days := terms.Params().DaysAfterDue
	next.Calendario.ValidadeAposVencimento = days
	before, _ := json.Marshal(r.cur)
	after, _ := json.Marshal(next)
	r.cur, r.terms = next, terms
	return string(before) != string(after), nil
}

// expireCobVLocked moves a cobv past its last payable day to REMOVIDA_PELO_PSP.
func (s *Server) expireCobVLocked(r *cobvRecord) {
	if r.cur.Status == CobActive && today(s.now()).After(r.terms.LastPayableDay()) {
		r.cur.Status = CobRemovedBy
	}
}

func (s *Server) putCobV(w http.ResponseWriter, r *http.Request) {
	txid := r.PathValue("txid")
	var req cobvRequest
	if !decodeCobV(w, r, &req, true) {
		return
	}
	if !txidRE.MatchString(txid) {
		problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "txid inválido",
			Violacao{Razao: "txid não respeita o schema", Propriedade: "txid"})
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if rec, exists := s.cobvs[txid]; exists {
		s.expireCobVLocked(rec)
		if rec.cur.Status != CobActive {
			problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "a cobrança já existe e não está ATIVA")
			return
		}
		s.reviseCobVLocked(w, rec, &req, true, http.StatusCreated)
		return
	}
	rec, v, err := s.newCobVLocked(txid, &req)
	switch {
	case err != nil:
		problem(w, http.StatusInternalServerError, ProblemInternal, "Erro interno", "")
	case len(v) > 0:
		problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "A requisição não respeita as regras da cobrança.", v...)
	default:
		writeJSON(w, http.StatusCreated, rec.view())
	}
}

// newCobVLocked creates the cobv txid asks for (a PUT's request, checked
// against the schema), ATIVA with its location and BR Code; a request
// whose terms break a rule creates nothing and gets its violations.
func (s *Server) newCobVLocked(txid string, req *cobvRequest) (*cobvRecord, []Violacao, error) {
	now := s.now()
	rec := &cobvRecord{created: today(now)}
	rec.cur.TxID, rec.cur.Status, rec.cur.Recebedor = txid, CobActive, simRecebedor
	rec.cur.Calendario.Criacao = stamp(now)
	if _, v := rec.apply(req, true); len(v) > 0 {
		return nil, v, nil
	}
	loc, err := s.newCobVLocationLocked(txid)
	if err != nil {
		return nil, nil, err
	}
	code, err := brcode.NewDynamic(loc, simRecebedor.Nome, simRecebedor.Cidade)
	if err != nil {
		return nil, nil, err
	}
	s.locs++
	rec.cur.Loc = &Loc{ID: s.locs, TxID: txid, Location: loc, TipoCob: "cobv", Criacao: stamp(now)}
	rec.cur.Locat = loc
	rec.cur.PixCopiaECola = code
	rec.revs = []CobV{rec.view()}
	s.cobvs[txid] = rec
	return rec, nil, nil
}

// reviseCobVLocked applies a revision and answers it with status; revisao
// moves only when something changed.
func (s *Server) reviseCobVLocked(w http.ResponseWriter, rec *cobvRecord, req *cobvRequest, full bool, status int) {
	saved, savedTerms := rec.cur, rec.terms
	changed, v := rec.apply(req, full)
	if len(v) > 0 {
		rec.cur, rec.terms = saved, savedTerms
		problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "A requisição não respeita as regras da cobrança.", v...)
		return
	}
	if changed {
		rec.cur.Revisao++
		rec.revs = append(rec.revs, rec.view())
	}
	writeJSON(w, status, rec.view())
}

func decodeCobV(w http.ResponseWriter, r *http.Request, req *cobvRequest, full bool) bool {
	body, err := io.ReadAll(io.LimitReader(r.Body, maxCobVBody))
	if err == nil {
		err = json.Unmarshal(body, req)
	}
	if err == nil {
		err = json.Unmarshal(body, &req.members)
	}
	if err != nil {
		badJSON(w)
		return false
	}
	if v := req.violations(full); len(v) > 0 {
		problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "A requisição não respeita o schema.", v...)
		return false
	}
	return true
}

// findCobVLocked is the request's cobv, brought up to date, or nil after
// answering 404.
func (s *Server) findCobVLocked(w http.ResponseWriter, r *http.Request) *cobvRecord {
	rec, ok := s.cobvs[r.PathValue("txid")]
	if !ok {
		problem(w, http.StatusNotFound, ProblemCobVNotFound, "Cobrança não encontrada.", "")
		return nil
	}
	s.expireCobVLocked(rec)
	return rec
}

func (s *Server) getCobV(w http.ResponseWriter, r *http.Request) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.findCobVLocked(w, r)
	if rec == nil {
		return
	}
	if q := r.URL.Query().Get("revisao"); q != "" {
		n, err := strconv.Atoi(q)
		if err != nil || n < 0 || n >= len(rec.revs) {
			problem(w, http.StatusBadRequest, ProblemCobVQuery, "Consulta inválida.", "revisão inexistente para a cobrança",
				Violacao{Razao: "revisão inexistente", Propriedade: "revisao"})
			return
		}
		writeJSON(w, http.StatusOK, rec.revs[n])
		return
	}
	writeJSON(w, http.StatusOK, rec.view())
}

func (s *Server) patchCobV(w http.ResponseWriter, r *http.Request) {
	var req cobvRequest
	if !decodeCobV(w, r, &req, false) {
		return
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	rec := s.findCobVLocked(w, r)
	if rec == nil {
		return
	}
	switch {
	case req.Status == CobRemoved && rec.cur.Status == CobRemoved:
		writeJSON(w, http.StatusOK, rec.view()) // removing twice is the same removal
	case rec.cur.Status != CobActive:
		problem(w, http.StatusBadRequest, ProblemCobVInvalid, "Cobrança inválida.", "a cobrança não está ATIVA")
	case req.Status == CobRemoved:
		rec.cur.Status = CobRemoved
		rec.cur.Revisao++
		rec.revs = append(rec.revs, rec.view())
		writeJSON(w, http.StatusOK, rec.view())
	default:
		s.reviseCobVLocked(w, rec, &req, false, http.StatusOK)
	}
}

// ErrCobVClosed: the payment's day is after the cobv's last payable day.
var ErrCobVClosed = errors.New("pixsim: the due-date charge can no longer be paid")

// amountDueLocked is what a payment of rec on day pays: the amount due
// that day (0 asks for it), or ErrNotPayable / ErrCobVClosed.
func (s *Server) amountDueLocked(rec *cobvRecord, day bizdays.Date) (int64, error) {
	s.expireCobVLocked(rec)
	if rec.cur.Status != CobActive {
		return 0, ErrNotPayable
	}
	b, err := rec.terms.AmountDue(day)
	if errors.Is(err, domain.ErrOverdueClosed) {
		return 0, ErrCobVClosed
	}
	if err != nil {
		return 0, ErrNotPayable
	}
	return b.AmountDue, nil
}

// CobVByTxID returns the cobv of txid as GET /cobv/{txid} answers it, for
// tests.
func (s *Server) CobVByTxID(txid string) (CobV, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	rec, ok := s.cobvs[txid]
	if !ok {
		return CobV{}, false
	}
	s.expireCobVLocked(rec)
	return rec.view(), true
}
