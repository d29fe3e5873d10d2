package pixsim

import (
	"encoding/json"
	"net/http"
	"time"
)

// Problem types of API Pix (RFC 7807 "type" values), by the names the
// specification gives them.
const (
	problemBase           = "https://pix.bcb.gov.br/api/v2/error/"
	ProblemCobInvalid     = problemBase + "CobOperacaoInvalida"
	ProblemCobNotFound    = problemBase + "CobNaoEncontrado"
	ProblemCobQuery       = problemBase + "CobConsultaInvalida"
	ProblemPixNotFound    = problemBase + "PixNaoEncontrado"
	ProblemPixQuery       = problemBase + "PixConsultaInvalida"
	ProblemReturnInvalid  = problemBase + "PixDevolucaoInvalida"
	ProblemReturnNotFound = problemBase + "PixDevolucaoNaoEncontrada"
	ProblemWebhookInvalid = problemBase + "WebhookOperacaoInvalida"
	ProblemWebhookMissing = problemBase + "WebhookNaoEncontrado"
	ProblemUnavailable    = problemBase + "ServicoIndisponivel"
	ProblemUnauthorized   = problemBase + "AcessoNegado"
	ProblemRequestInvalid = problemBase + "RequisicaoInvalida"
	ProblemInternal       = problemBase + "ErroInternoDoServidor"
)

// Cob is an immediate charge as the PSP answers it (API Pix "CobCompleta").
type Cob struct {
	Calendario struct {
		Criacao   string `json:"criacao"`
		Expiracao int    `json:"expiracao"`
	} `json:"calendario"`
	TxID    string  `json:"txid"`
	Revisao int     `json:"revisao"`
	Loc     *Loc    `json:"loc,omitempty"`
	Locat   string  `json:"location"`
	Status  string  `json:"status"`
	Devedor *Person `json:"devedor,omitempty"`
	Valor   struct {
		Original string `json:"original"`
	} `json:"valor"`
	Chave              string `json:"chave"`
	SolicitacaoPagador string `json:"solicitacaoPagador,omitempty"`
	PixCopiaECola      string `json:"pixCopiaECola"`
	Pix                []*Pix `json:"pix,omitempty"`
}

// Loc is the payload location of a cob; every cob answer carries all of
// its fields.
type Loc struct {
	ID       int64  `json:"id"`
	TxID     string `json:"txid"`
	Location string `json:"location"`
	TipoCob  string `json:"tipoCob"`
	Criacao  string `json:"criacao"`
}

// cobRecord is a cob and the revisions it went through: revs[n] is what
// revision n looked like when it was made (GET /cob/{txid}?revisao=n).
type cobRecord struct {
	cur  Cob
	revs []Cob
	at   time.Time
}

// view is the cob as answered: a copy that the caller may encode after the
// lock is released.
func (c *cobRecord) view() Cob {
	out := c.cur
	out.Loc, out.Pix = copyLoc(c.cur.Loc), copyPixes(c.cur.Pix)
	return out
}

// Person is a devedor or (extension) pagador.
type Person struct {
	CPF  string `json:"cpf,omitempty"`
	CNPJ string `json:"cnpj,omitempty"`
	Nome string `json:"nome,omitempty"`
}

func (p *Person) doc() string {
	if p == nil {
		return ""
	}
	if p.CPF != "" {
		return p.CPF
	}
	return p.CNPJ
}

// Pix is a received Pix. Pagador is a PSP-specific extension, present only
// when the payer's document is disclosed.
type Pix struct {
	EndToEndID  string       `json:"endToEndId"`
	TxID        string       `json:"txid,omitempty"`
	Valor       string       `json:"valor"`
	Chave       string       `json:"chave,omitempty"`
	Horario     string       `json:"horario"`
	InfoPagador string       `json:"infoPagador,omitempty"`
	Pagador     *Person      `json:"pagador,omitempty"`
	Devolucoes  []*Devolucao `json:"devolucoes,omitempty"`

	payer  Person
	amount int64
	at     time.Time
}

func copyPix(p *Pix) Pix {
	out := *p
	out.Devolucoes = nil
	for _, d := range p.Devolucoes {
		dd := *d
		out.Devolucoes = append(out.Devolucoes, &dd)
	}
	return out
}

// Devolucao is a devolução of a received Pix.
type Devolucao struct {
	ID        string `json:"id"`
	RtrID     string `json:"rtrId"`
	Valor     string `json:"valor"`
	Natureza  string `json:"natureza"`
	Descricao string `json:"descricao,omitempty"`
	Horario   struct {
		Solicitacao string `json:"solicitacao"`
		Liquidacao  string `json:"liquidacao,omitempty"`
	} `json:"horario"`
	Status string `json:"status"`
	Motivo string `json:"motivo,omitempty"`

	amount int64
	fail   bool
	at     time.Time
}

// Problem is an RFC 7807 body as API Pix sends it.
type Problem struct {
	Type      string     `json:"type"`
	Title     string     `json:"title"`
	Status    int        `json:"status"`
	Detail    string     `json:"detail,omitempty"`
	Violacoes []Violacao `json:"violacoes,omitempty"`
}

// Violacao names a field that broke a rule.
type Violacao struct {
	Razao       string `json:"razao"`
	Propriedade string `json:"propriedade"`
}

func problem(w http.ResponseWriter, status int, typ, title, detail string, v ...Violacao) {
	w.Header().Set("Content-Type", "application/problem+json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(Problem{Type: typ, Title: title, Status: status, Detail: detail, Violacoes: v})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func badJSON(w http.ResponseWriter) {
	problem(w, http.StatusBadRequest, ProblemRequestInvalid, "Requisição inválida.", "JSON inválido")
}

// copyLoc is a copy of l (nil for none) the caller may keep.
func copyLoc(l *Loc) *Loc {
	if l == nil {
		return nil
	}
	c := *l
	return &c
}

// copyPixes is a copy of ps the caller may encode after the lock is
// released.
func copyPixes(ps []*Pix) []*Pix {
	var out []*Pix
	for _, p := range ps {
		pp := copyPix(p)
		out = append(out, &pp)
	}
	return out
}
