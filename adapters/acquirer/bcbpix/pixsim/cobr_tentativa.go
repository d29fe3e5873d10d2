package pixsim

import (
	"crypto/rand"
	"net/http"
	"slices"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// rejectionCodes are the codes an attempt may be refused with; the
// fatal ones refuse the recurring charge too.
var (
	rejectionCodes = []string{"AB10", "AC05", "AC06", "AM02", "AM09", "DENC", "DS27", "DTED", "DTNT", "FBRD", "IRNT",
		"MIDI", "MSUC", "NIEC", "NIPA", "NITX", "QUNT", "RC09", "UDEI"}
	fatalRejectionCodes = []string{"AC05", "AM09", "DENC", "DS27", "DTED", "MIDI", "MSUC", "NITX", "RC09"}
)

// cobrEnded reports whether a recurring charge can change no more.
func cobrEnded(status string) bool {
	return status == CobRConcluida || status == CobRExpirada || status == CobRRejeitada || status == CobRCancelada
}

// openTentativa is c's attempt still awaiting settlement (SOLICITADA or
// AGENDADA), or nil; there is at most one.
func openTentativa(c *cobrRecord) *Tentativa {
	for _, t := range c.tents {
		if t.Status == TentativaSolicitada || t.Status == TentativaAgendada {
			return t
		}
	}
	return nil
}

// addTentativaLocked adds an attempt of kind tipo for day, SOLICITADA,
// with the end-to-end id its Pix will take.
func (s *Server) addTentativaLocked(c *cobrRecord, tipo string, day bizdays.Date) *Tentativa {
	now := s.now()
	e2e, err := domain.NewEndToEndID(s.cfg.ISPB, now, rand.Reader)
	if err != nil {
		e2e = "E" + s.cfg.ISPB + now.UTC().Format("200601021504") + randomAlnum(11)
	}
	t := &Tentativa{DataLiquidacao: day.String(), Tipo: tipo, Status: TentativaSolicitada, EndToEndID: e2e,
		Atualizacao: history(nil, TentativaSolicitada, now)}
	c.tents = append(c.tents, t)
	return t
}

func (s *Server) setTentativaLocked(t *Tentativa, status string) {
	t.Status = status
	t.Atualizacao = history(t.Atualizacao, status, s.now())
}

func (s *Server) setCobRStatusLocked(c *cobrRecord, status string) {
	c.cur.Status = status
	c.cur.Atualizacao = history(c.cur.Atualizacao, status, s.now())
}

// rejectTentativaLocked refuses attempt t with why; a fatal code refuses
// the recurring charge too.
func (s *Server) rejectTentativaLocked(c *cobrRecord, t *Tentativa, why Rejeicao) {
	t.Rejeicao = &why
	s.setTentativaLocked(t, TentativaRejeitada)
	if slices.Contains(fatalRejectionCodes, why.Codigo) {
		c.cur.Encerramento = &Encerramento{Rejeicao: &Rejeicao{Codigo: why.Codigo, Descricao: why.Descricao}}
		s.setCobRStatusLocked(c, CobRRejeitada)
	}
}

// cancelCobRLocked cancels c and its open attempt on behalf of solicitante
// and queues the callback.
func (s *Server) cancelCobRLocked(c *cobrRecord, solicitante, codigo, descricao string) {
	if t := openTentativa(c); t != nil {
		s.setTentativaLocked(t, TentativaCancelada)
	}
	c.cur.Encerramento = &Encerramento{Cancelamento: &Cancelamento{Solicitante: solicitante, Codigo: codigo, Descricao: descricao}}
	s.setCobRStatusLocked(c, CobRCancelada)
	s.notifyCobRLocked(c)
}

// retryLimit is the last day a new attempt of c may be settled: seven
// days after its first attempt's settlement date.
func retryLimit(c *cobrRecord) bizdays.Date {
	first, _ := bizdays.ParseDate(c.tents[0].DataLiquidacao)
	return first.AddDays(retryWindowDays)
}

func countNew(c *cobrRecord) int {
	n := 0
	for _, t := range c.tents {
		if t.Tipo == TentativaNova {
			n++
		}
	}
	return n
}

// retryPossibleLocked reports whether the receiver may still ask for a new
// attempt of c: its policy allows retries, fewer than three were asked and
// a day is left in the window.
func (s *Server) retryPossibleLocked(c *cobrRecord) bool {
	return c.cur.PoliticaRetentativa == RetryThreeIn7Days && countNew(c) < maxRetries && retryLimit(c).After(today(s.now()))
}

// expireCobRLocked ends as EXPIRADA an ATIVA charge with no attempt
// pending that can no longer be retried.
func (s *Server) expireCobRLocked(c *cobrRecord) {
	if c.cur.Status == CobRAtiva && openTentativa(c) == nil && !s.retryPossibleLocked(c) {
		s.setCobRStatusLocked(c, CobRExpirada)
		s.notifyCobRLocked(c)
	}
}

// postRetentativa asks for a new attempt (NTAG) of a failed recurring
// charge on {data}: the recurrence must allow retries, no attempt may be
// pending, the day must be in the future, in the seven days after the
// first settlement date and not taken, and at most three may be asked. The
// answer shows it SOLICITADA; the payer's PSP schedules it at once.
func (s *Server) postRetentativa(w http.ResponseWriter, r *http.Request) {
	defer s.lockAuto()()
	c := s.findCobRLocked(w, r)
	if c == nil {
		return
	}
	bad := func(prop, why string) {
		cobrInvalid(w, why, Violacao{Razao: why, Propriedade: prop})
	}
	day, err := bizdays.ParseDate(r.PathValue("data"))
	taken := slices.ContainsFunc(c.tents, func(t *Tentativa) bool { return t.DataLiquidacao == r.PathValue("data") && t.Tipo == TentativaNova })
	switch {
	case err != nil:
		bad("data", "data inválida (AAAA-MM-DD)")
	case c.cur.PoliticaRetentativa != RetryThreeIn7Days:
		bad("cobr.politicaRetentativa", "A política configurada na recorrência não permite retentativa de cobrança.")
	case openTentativa(c) != nil:
		bad("cobr.tentativas", "Existe uma tentativa com status SOLICITADA ou AGENDADA.")
	case c.cur.Status != CobRAtiva:
		bad("cobr.status", "a cobrança está "+c.cur.Status+" e não admite retentativa")
	case !day.After(today(s.now())):
		bad("data", "O parâmetro data não corresponde a uma data futura.")
	case !day.After(retryLimit(c).AddDays(-retryWindowDays)):
		bad("data", "a retentativa deve ser posterior à data prevista da primeira tentativa")
	case day.After(retryLimit(c)):
		bad("data", "a retentativa deve ser liquidada em até 7 dias após a data prevista da primeira tentativa")
	case taken:
		bad("data", "Existe uma tentativa vigente para a data informada.")
	case countNew(c) >= maxRetries:
		bad("cobr.tentativas", "já foram solicitadas 3 retentativas")
	default:
		t := s.addTentativaLocked(c, TentativaNova, day)
		writeJSON(w, http.StatusCreated, cobrView(c))
		s.setTentativaLocked(t, TentativaAgendada)
		s.notifyCobRLocked(c)
	}
}
