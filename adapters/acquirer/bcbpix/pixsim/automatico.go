package pixsim

// Pix Automático (API Pix 2.9 tags Rec, SolicRec, CobR, PayloadLocationRec,
// RecPayload, WebhookRec and WebhookCobR): the statuses, problem types and
// the state the simulator keeps; the bodies are in automatico_types.go. The
// operations live in locrec.go, rec.go, rec_revise.go, solicrec.go,
// cobr.go, cobr_tentativa.go and webhookrec.go; the payer's side in
// control_rec.go and control_cobr.go.

import (
	"crypto/rand"
	"crypto/rsa"
	"regexp"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// The problem types of Pix Automático, by the names the specification gives.
const (
	ProblemRecInvalid         = problemBase + "RecOperacaoInvalida"
	ProblemRecNotFound        = problemBase + "RecNaoEncontrada"
	ProblemRecQuery           = problemBase + "RecConsultaInvalida"
	ProblemSolicRecInvalid    = problemBase + "SolicRecOperacaoInvalida"
	ProblemSolicRecNotFound   = problemBase + "SolicRecNaoEncontrada"
	ProblemCobRInvalid        = problemBase + "CobROperacaoInvalida"
	ProblemCobRNotFound       = problemBase + "CobRNaoEncontrado"
	ProblemCobRQuery          = problemBase + "CobRConsultaInvalida"
	ProblemLocRecNotFound     = problemBase + "PayloadLocationRecNaoEncontrado"
	ProblemLocRecQuery        = problemBase + "PayloadLocationRecConsultaInvalida"
	ProblemRecPayloadNotFound = problemBase + "RecPayloadNaoEncontrado"
	ProblemRecPayloadInvalid  = problemBase + "RecPayloadOperacaoInvalida"
	ProblemWebhookRecInvalid  = problemBase + "WebhookRecOperacaoInvalida"
	ProblemWebhookCobRInvalid = problemBase + "WebhookCobROperacaoInvalida"
	ProblemNotFound           = problemBase + "NaoEncontrado"
)

// Recurrence statuses (RecStatus).
const (
	RecCriada    = "CRIADA"
	RecAprovada  = "APROVADA"
	RecRejeitada = "REJEITADA"
	RecExpirada  = "EXPIRADA"
	RecCancelada = "CANCELADA"
)

// Statuses of a request for the payer's confirmation (SolicRecStatus).
const (
	SolicRecCriada    = "CRIADA"
	SolicRecEnviada   = "ENVIADA"
	SolicRecRecebida  = "RECEBIDA"
	SolicRecAceita    = "ACEITA"
	SolicRecRejeitada = "REJEITADA"
	SolicRecExpirada  = "EXPIRADA"
	SolicRecCancelada = "CANCELADA"
)

// Statuses of a recurring charge (CobRStatus).
const (
	CobRCriada    = "CRIADA"
	CobRAtiva     = "ATIVA"
	CobRConcluida = "CONCLUIDA"
	CobRExpirada  = "EXPIRADA"
	CobRRejeitada = "REJEITADA"
	CobRCancelada = "CANCELADA"
)

// Statuses of an attempt to settle a recurring charge (CobRTentativas).
const (
	TentativaSolicitada = "SOLICITADA"
	TentativaAgendada   = "AGENDADA"
	TentativaPaga       = "PAGA"
	TentativaCancelada  = "CANCELADA"
	TentativaRejeitada  = "REJEITADA"
	TentativaExpirada   = "EXPIRADA"
)

// Kinds of attempt: the one scheduled for the due date (AGND), a new one
// the receiver asked for (NTAG, POST /cobr/{txid}/retentativa/{data}) and
// the payer's PSP's same-day retry after a failed settlement (RIFL).
const (
	TentativaAgendamento = "AGND"
	TentativaNova        = "NTAG"
	TentativaIntradia    = "RIFL"
)

// Activation journeys (RecAtivacao.tipoJornada): 1, a request for the
// payer's confirmation (solicrec); 2, the recurrence's QR code; 3, a
// composite QR code paid at once (an immediate charge) and approved; 4, a
// composite QR code of a due-date charge.
const (
	Jornada1          = "JORNADA_1"
	Jornada2          = "JORNADA_2"
	Jornada3          = "JORNADA_3"
	Jornada4          = "JORNADA_4"
	JornadaAguardando = "AGUARDANDO_DEFINICAO"
)

// Retry policies of a recurrence: none, or up to three new attempts within
// seven days after the due date.
const (
	RetryNotAllowed   = "NAO_PERMITE"
	RetryThreeIn7Days = "PERMITE_3R_7D"
)

// Who cancels (encerramento.cancelamento.solicitante).
const (
	UsuarioRecebedor = "USUARIO_RECEBEDOR"
	UsuarioPagador   = "USUARIO_PAGADOR"
	PSPPagador       = "PSP_PAGADOR"
)

// The rules pixsim keeps that the specification leaves to the arrangement,
// and the codes it answers with when the caller names none.
const (
	defaultPayerISPB   = "99999997"
	retryWindowDays    = 7
	maxRetries         = 3
	minDaysBeforeDue   = 2
	maxDaysBeforeDue   = 10
	recCancelByPayee   = "SLCR"
	recCancelByPayer   = "SLDB"
	cobrCancelByPayee  = "SLCR"
	cobrCancelByPayer  = "SLBD"
	recRejectByDefault = "AP14"
)

// recIDRE is the form of an idRec (and of an idSolicRec).
var recIDRE = regexp.MustCompile(`^[a-zA-Z0-9]{29}$`)

// Callback causes of Pix Automático.
const (
	CauseRec  = "rec"
	CauseCobR = "cobr"
)

// recRecord is a recurrence and what its answers are computed from.
type recRecord struct {
	cur     Rec // Loc, Solicitacao and DadosQR are filled in by view
	at      time.Time
	created bizdays.Date
	locID   int64
	solics  []string
	cobrs   []string
}

type solicRecord struct {
	cur     SolicRec // RecPayload is filled in by view
	at      time.Time
	expires time.Time
}

type cobrRecord struct {
	cur   CobR // Tentativas is filled in by view
	tents []*Tentativa
	at    time.Time
	due   bizdays.Date // the due date, moved to a business day when asked
}

type locRecRecord struct {
	id    int64
	token string
	at    time.Time
	idRec string
}

// callbackOut is a callback decided under the lock and posted after it.
type callbackOut struct {
	target, mode, cause string
	ids                 []string
	body                []byte
}

// automatico is the Pix Automático state of a Server, guarded by its mu.
type automatico struct {
	recs       map[string]*recRecord
	recOrder   []string
	solics     map[string]*solicRecord
	cobrs      map[string]*cobrRecord
	cobrOrder  []string
	locs       map[int64]*locRecRecord
	locByToken map[string]int64
	nextLoc    int64
	hookRec    *webhook
	hookCobR   *webhook
	outbox     []callbackOut
	jwsKey     *rsa.PrivateKey
	jwsKeyID   string
}

func newAutomatico() automatico {
	return automatico{recs: map[string]*recRecord{}, solics: map[string]*solicRecord{}, cobrs: map[string]*cobrRecord{},
		locs: map[int64]*locRecRecord{}, locByToken: map[string]int64{}}
}

const idAlphabet = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789"

// randomAlnum is n characters of [a-zA-Z0-9].
func randomAlnum(n int) string {
	b := make([]byte, n)
	_, _ = rand.Read(b)
	for i := range b {
		b[i] = idAlphabet[int(b[i])%len(idAlphabet)]
	}
	return string(b)
}

// newRecID forms an idRec: R, R or N (retries allowed or not), the ISPB,
// the day of creation and 11 characters unique within the day.
func (s *Server) newRecID(policy string, day bizdays.Date) string {
	kind := "N"
	if policy == RetryThreeIn7Days {
		kind = "R"
	}
	return "R" + kind + s.cfg.ISPB + compactDate(day) + randomAlnum(11)
}

// newSolicRecID forms an idSolicRec: SC, the ISPB, the day and 11 characters.
func (s *Server) newSolicRecID(day bizdays.Date) string {
	return "SC" + s.cfg.ISPB + compactDate(day) + randomAlnum(11)
}

func compactDate(d bizdays.Date) string {
	return d.String()[0:4] + d.String()[5:7] + d.String()[8:10]
}

// history appends a status to a history at t.
func history(h []Atualizacao, status string, t time.Time) []Atualizacao {
	return append(h, Atualizacao{Status: status, Data: stamp(t)})
}

// takeOutboxLocked hands over the callbacks decided so far.
func (s *Server) takeOutboxLocked() []callbackOut {
	out := s.auto.outbox
	s.auto.outbox = nil
	return out
}

// refreshAutoLocked applies what time decides: a request for confirmation
// past dataExpiracaoSolicitacao expires, and with it its recurrence if
// still CRIADA; a recurring charge that failed and can no longer be
// retried expires.
func (s *Server) refreshAutoLocked() {
	now := s.now()
	for _, id := range s.auto.recOrder {
		rec := s.auto.recs[id]
		for _, sid := range rec.solics {
			if sr := s.auto.solics[sid]; solicOpen(sr.cur.Status) && !now.Before(sr.expires) {
				s.expireSolicLocked(sr)
			}
		}
	}
	for _, txid := range s.auto.cobrOrder {
		s.expireCobRLocked(s.auto.cobrs[txid])
	}
}

// lockAuto takes the lock and applies what time decided; the function it
// returns releases the lock and posts, in the background, the callbacks
// queued meanwhile: defer s.lockAuto()().
func (s *Server) lockAuto() func() {
	s.mu.Lock()
	s.refreshAutoLocked()
	return func() {
		out := s.takeOutboxLocked()
		s.mu.Unlock()
		s.deliverLater(out)
	}
}
