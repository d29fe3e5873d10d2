package pixsim

import (
	"encoding/json"
	"errors"
	"fmt"
	"net/http"

	"github.com/quitapix/quita/domain/brcode"
)

var errMissing = errors.New("pixsim: missing")

// recEnded reports whether a recurrence can change no more.
func recEnded(status string) bool {
	return status == RecExpirada || status == RecRejeitada || status == RecCancelada
}

// reviseViolations checks a PATCH /rec body against rec: only status
// (CANCELADA), vinculo.devedor.nome, loc, calendario.dataInicial and
// ativacao.dadosJornada.txid may be revised; loc and dataInicial only
// while the recurrence is CRIADA; nothing once it ended.
func (s *Server) reviseViolations(q *recRequest, rec *recRecord) []Violacao {
	var v []Violacao
	add := func(prop, why string) { v = append(v, Violacao{Razao: why, Propriedade: prop}) }
	if recEnded(rec.cur.Status) {
		add("rec.status", "A recorrência encontra-se expirada, cancelada ou rejeitada.")
		return v
	}
	if q.Status != nil && *q.Status != RecCancelada {
		add("rec.status", "status só aceita CANCELADA")
	}
	if q.Valor != nil || q.PoliticaRetentativa != nil || q.Recebedor != nil {
		add("rec", "só podem ser revisados status, vinculo.devedor.nome, loc, calendario.dataInicial e ativacao.dadosJornada.txid")
	}
	if vin := q.Vinculo; vin != nil {
		switch {
		case vin.Contrato != nil || vin.Objeto != nil:
			add("rec.vinculo", "só vinculo.devedor.nome pode ser revisado")
		case vin.Devedor == nil || vin.Devedor.CPF != "" || vin.Devedor.CNPJ != "":
			add("rec.vinculo.devedor", "só o nome do devedor pode ser revisado")
		case vin.Devedor.Nome == "" || len([]rune(vin.Devedor.Nome)) > 140:
			add("rec.vinculo.devedor.nome", "nome obrigatório, até 140 caracteres")
		}
	}
	if q.Loc != nil && rec.cur.Status != RecCriada {
		add("rec.loc", "O campo rec.loc somente pode ser alterado quando a recorrência apresentar-se com o status CRIADA.")
	}
	v = append(v, s.locViolationsLocked(q.Loc, rec.cur.IDRec)...)
	if c := q.Calendario; c != nil {
		start, err := parseDay(c.DataInicial)
		switch {
		case c.DataFinal != nil || c.Periodicidade != nil:
			add("rec.calendario", "só calendario.dataInicial pode ser revisado")
		case rec.cur.Status != RecCriada:
			add("rec.calendario.dataInicial", "O campo rec.calendario.dataInicial somente pode ser alterado quando a recorrência apresentar-se com o status CRIADA.")
		case err != nil:
			add("rec.calendario.dataInicial", "data inválida (AAAA-MM-DD)")
		case start.Before(rec.created):
			add("rec.calendario.dataInicial", "anterior à data de criação da recorrência")
		}
	}
	if a := q.Ativacao; a != nil && (a.DadosJornada == nil || !txidRE.MatchString(a.DadosJornada.TxID)) {
		add("rec.ativacao.dadosJornada.txid", "não respeita o schema")
	}
	return v
}

// patchRec revises a recurrence or, with status CANCELADA, cancels it as
// the receiving user (encerramento.cancelamento USUARIO_RECEBEDOR, SLCR):
// its open request for confirmation and its open recurring charges are
// cancelled with it.
func (s *Server) patchRec(w http.ResponseWriter, r *http.Request) {
	var req recRequest
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		badJSON(w)
		return
	}
	defer s.lockAuto()()
	rec := s.findRecLocked(w, r)
	if rec == nil {
		return
	}
	if v := s.reviseViolations(&req, rec); len(v) > 0 {
		recInvalid(w, "A revisão da recorrência não é possível.", v...)
		return
	}
	c := &rec.cur
	if req.Vinculo != nil {
		c.Vinculo.Devedor.Nome = req.Vinculo.Devedor.Nome
	}
	if req.Loc != nil {
		s.linkLocLocked(rec, *req.Loc)
	}
	if req.Calendario != nil {
		c.Calendario.DataInicial = *req.Calendario.DataInicial
	}
	if req.Ativacao != nil {
		c.Ativacao.DadosJornada = &DadosJornada{TxID: req.Ativacao.DadosJornada.TxID}
	}
	if req.Status != nil {
		s.cancelRecLocked(rec, UsuarioRecebedor, recCancelByPayee, "Cancelamento solicitado pelo usuário recebedor")
	}
	writeJSON(w, http.StatusOK, s.recViewLocked(rec, false))
}

// setRecStatusLocked moves rec to status, records it and queues the
// webhookrec callback.
func (s *Server) setRecStatusLocked(rec *recRecord, status string) {
	rec.cur.Status = status
	rec.cur.Atualizacao = history(rec.cur.Atualizacao, status, s.now())
	s.notifyRecLocked(rec)
}

// cancelRecLocked cancels rec on behalf of solicitante with codigo; its
// open request for confirmation and its open recurring charges end with it.
func (s *Server) cancelRecLocked(rec *recRecord, solicitante, codigo, descricao string) {
	rec.cur.Encerramento = &Encerramento{Cancelamento: &Cancelamento{Solicitante: solicitante, Codigo: codigo, Descricao: descricao}}
	for _, id := range rec.solics {
		if sr := s.auto.solics[id]; solicOpen(sr.cur.Status) {
			s.setSolicStatusLocked(sr, SolicRecCancelada)
		}
	}
	cobrCode := cobrCancelByPayer
	if solicitante == UsuarioRecebedor {
		cobrCode = cobrCancelByPayee
	}
	for _, txid := range rec.cobrs {
		if c := s.auto.cobrs[txid]; !cobrEnded(c.cur.Status) {
			s.cancelCobRLocked(c, solicitante, cobrCode, "Recorrência cancelada: "+descricao)
		}
	}
	s.setRecStatusLocked(rec, RecCancelada)
}

// dadosQRLocked is the composite QR code of rec for the journey txid
// names, or nil when rec has no location; bad says why the txid does not
// fit the recurrence.
func (s *Server) dadosQRLocked(rec *recRecord, txid string) (qr *DadosQR, bad string) {
	var payLoc, journey string
	switch cob, cobv := s.cobs[txid], s.cobvs[txid]; {
	case txid == "":
		journey = Jornada2
	case cob != nil:
		if d := rec.cur.Ativacao.DadosJornada; d != nil && d.TxID != txid {
			return nil, "o txid corresponde a uma cobrança imediata diferente da informada em ativacao.dadosJornada.txid"
		}
		journey, payLoc = Jornada3, cob.cur.Locat
	case cobv != nil:
		if rec.cur.Ativacao.TipoJornada == Jornada3 {
			return nil, "o txid corresponde a uma cobrança com vencimento e a recorrência foi ativada pela JORNADA_3"
		}
		journey, payLoc = Jornada4, cobv.cur.Locat
	default:
		return nil, "o txid não corresponde a uma cobrança imediata nem a uma cobrança com vencimento"
	}
	l := s.auto.locs[rec.locID]
	if l == nil {
		return nil, ""
	}
	return &DadosQR{Jornada: journey, PixCopiaECola: compositeQR(payLoc, s.recLocation(l.token))}, ""
}

// compositeQR is the BR Code of a recurrence (tag 80 with its location),
// with the charge's location in tag 26 when one is paid with it (journeys
// 3 and 4); for journey 2, tag 26 holds only the arrangement's GUI.
func compositeQR(payLocation, recLocation string) string {
	tlv := func(tag, v string) string { return fmt.Sprintf("%s%02d%s", tag, len(v), v) }
	const gui = "br.gov.bcb.pix"
	out := tlv("00", "01")
	account := tlv("00", gui)
	if payLocation != "" {
		out += tlv("01", "12")
		account += tlv("25", payLocation)
	}
	out += tlv("26", account) + tlv("52", "0000") + tlv("53", "986") + tlv("58", "BR") +
		tlv("59", simRecebedor.Nome) + tlv("60", simRecebedor.Cidade) + tlv("62", tlv("05", "***")) +
		tlv("80", tlv("00", gui)+tlv("25", recLocation)) + "6304"
	return out + fmt.Sprintf("%04X", brcode.CRC16CCITT([]byte(out)))
}
