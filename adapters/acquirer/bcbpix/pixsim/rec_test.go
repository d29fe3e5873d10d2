package pixsim_test

// Recurrences (rec) and their payload locations (locrec), checked over
// HTTP as a PSP client sees them; every exchange is also checked against
// the API Pix document when it is at hand.

import (
	"crypto"
	"crypto/rsa"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/pixsim"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
)

// Rule: a location is made by POST /locrec (201, its location in the
// Location header), read by GET /locrec/{id}, shows the recurrence it
// serves, and DELETE /locrec/{id}/idRec unlinks them without changing the
// recurrence's status.
func TestLocRecLinkAndUnlink(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	code, h, body := c.raw("POST", "/locrec", "")
	var loc pixsim.LocRec
	if err := json.Unmarshal([]byte(body), &loc); err != nil || code != 201 || h.Get("Location") != loc.Location ||
		!strings.HasPrefix(loc.Location, "pixsim.local/qr/v2/rec/") || loc.Tipo != "rec" || loc.IDRec != "" {
		t.Fatalf("POST /locrec: %d %v %s", code, h, body)
	}
	id := jsonNum(loc.ID)
	rec := c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+id))
	idRec := str(rec, "idRec")
	if str(rec, "loc", "idRec") != idRec || str(rec, "loc", "location") != loc.Location {
		t.Errorf("the recurrence's loc: %v", rec["loc"])
	}
	if got := c.must(200, "GET", "/locrec/"+id, ""); str(got, "idRec") != idRec {
		t.Errorf("GET /locrec: %v, want idRec %s", got, idRec)
	}
	if code, p := c.do("POST", "/rec", recWith("NAO_PERMITE", `"loc":`+id)); code != 400 || p["type"] != pixsim.ProblemRecInvalid {
		t.Errorf("a location taken by another recurrence: %d %v", code, p)
	}
	if got := c.must(200, "DELETE", "/locrec/"+id+"/idRec", ""); got["idRec"] != nil {
		t.Errorf("after unlinking: %v", got)
	}
	if r, _ := sim.RecByID(idRec); r.Loc != nil || r.Status != pixsim.RecCriada {
		t.Errorf("the recurrence after unlinking: loc %v status %s", r.Loc, r.Status)
	}
	for _, path := range []string{"/locrec/999", "/locrec/x", "/locrec/999/idRec"} {
		method := map[bool]string{true: "DELETE", false: "GET"}[strings.HasSuffix(path, "idRec")]
		if code, p := c.do(method, path, ""); code != 404 || p["type"] != pixsim.ProblemLocRecNotFound {
			t.Errorf("%s %s: %d %v", method, path, code, p)
		}
	}
	if code, p := c.do("POST", "/rec", recWith("NAO_PERMITE", `"loc":999`)); code != 400 || p["type"] != pixsim.ProblemRecInvalid {
		t.Errorf("an unknown location: %d %v", code, p)
	}
}

// Rule: POST /rec answers 201 CRIADA with the PSP's idRec (R, R or N by
// the retry policy, the ISPB, the day, 11 characters), the receiving
// merchant, a history and ativacao AGUARDANDO_DEFINICAO; a body that breaks
// the schema or the calendar is 400 RecOperacaoInvalida naming the field.
func TestRecCreate(t *testing.T) {
	t.Parallel()
	_, c, _ := startAuto(t, pixsim.Config{})
	rec := c.must(201, "POST", "/rec", recBody)
	id := str(rec, "idRec")
	if len(id) != 29 || !strings.HasPrefix(id, "RR99999998"+"20260302") || rec["status"] != "CRIADA" ||
		str(rec, "ativacao", "tipoJornada") != "AGUARDANDO_DEFINICAO" || str(rec, "recebedor", "cnpj") == "" ||
		strings.Join(statuses(rec["atualizacao"]), ",") != "CRIADA" || str(rec, "valor", "valorRec") != "49.90" {
		t.Fatalf("POST /rec: %v", rec)
	}
	if got := c.must(201, "POST", "/rec", recWith("NAO_PERMITE", "")); !strings.HasPrefix(str(got, "idRec"), "RN") {
		t.Errorf("NAO_PERMITE idRec %s, want RN…", str(got, "idRec"))
	}
	base := strings.NewReplacer("\n", "")
	cases := []struct{ name, body, prop string }{
		{"no vinculo", `{"calendario":{"dataInicial":"2026-03-10","periodicidade":"MENSAL"},"politicaRetentativa":"NAO_PERMITE"}`, "rec.vinculo"},
		{"bad cpf", strings.Replace(recBody, "12345678909", "12345678900", 1), "rec.vinculo.devedor"},
		{"no contrato", strings.Replace(recBody, `"contrato":"CT-0001",`, "", 1), "rec.vinculo.contrato"},
		{"start before today", strings.Replace(recBody, "2026-03-10", "2026-03-01", 1), "rec.calendario.dataInicial"},
		{"end before start", strings.Replace(recBody, `"dataInicial"`, `"dataFinal":"2026-03-09","dataInicial"`, 1), "rec.calendario.dataFinal"},
		{"period", strings.Replace(recBody, "MENSAL", "DIARIA", 1), "rec.calendario.periodicidade"},
		{"both amounts", strings.Replace(recBody, `"valorRec":"49.90"`, `"valorRec":"49.90","valorMinimoRecebedor":"10.00"`, 1), "rec.valor"},
		{"zero amount", strings.Replace(recBody, "49.90", "0.00", 1), "rec.valor.valorRec"},
		{"policy", strings.Replace(recBody, "PERMITE_3R_7D", "SEMPRE", 1), "rec.politicaRetentativa"},
		{"journey txid", recWith("NAO_PERMITE", `"ativacao":{"dadosJornada":{"txid":"curto"}}`), "rec.ativacao.dadosJornada.txid"},
	}
	for _, tc := range cases {
		code, p := c.do("POST", "/rec", base.Replace(tc.body))
		v, _ := p["violacoes"].([]any)
		if code != 400 || p["type"] != pixsim.ProblemRecInvalid || len(v) == 0 || str(v[0].(map[string]any), "propriedade") != tc.prop {
			t.Errorf("%s: %d %v, want 400 RecOperacaoInvalida on %s", tc.name, code, p, tc.prop)
		}
	}
	if code, p := c.do("GET", "/rec/RN9999999820260302abcdefghijk", ""); code != 404 || p["type"] != pixsim.ProblemRecNotFound {
		t.Errorf("unknown idRec: %d %v", code, p)
	}
}

// Rule: PATCH /rec revises vinculo.devedor.nome and, while the recurrence
// is CRIADA, loc and calendario.dataInicial; other fields are refused; a
// recurrence that ended cannot be revised; status CANCELADA cancels it as
// the receiving user.
func TestRecRevise(t *testing.T) {
	t.Parallel()
	_, c, _ := startAuto(t, pixsim.Config{})
	id := str(c.must(201, "POST", "/rec", recBody), "idRec")
	loc := jsonNum(c.must(201, "POST", "/locrec", "")["id"])
	got := c.must(200, "PATCH", "/rec/"+id, `{"vinculo":{"devedor":{"nome":"Fulana"}},"loc":`+loc+`,"calendario":{"dataInicial":"2026-04-10"}}`)
	if str(got, "vinculo", "devedor", "nome") != "Fulana" || str(got, "calendario", "dataInicial") != "2026-04-10" || got["loc"] == nil {
		t.Errorf("revision: %v", got)
	}
	for name, body := range map[string]string{
		"amount":       `{"valor":{"valorRec":"1.00"}}`,
		"debtor's cpf": `{"vinculo":{"devedor":{"cpf":"12345678909","nome":"X"}}}`,
		"status":       `{"status":"APROVADA"}`,
		"start past":   `{"calendario":{"dataInicial":"2026-03-01"}}`,
	} {
		if code, p := c.do("PATCH", "/rec/"+id, body); code != 400 || p["type"] != pixsim.ProblemRecInvalid {
			t.Errorf("%s: %d %v", name, code, p)
		}
	}
	approved := approvedRec(t, c, "NAO_PERMITE")
	if code, p := c.do("PATCH", "/rec/"+approved, `{"calendario":{"dataInicial":"2026-04-10"}}`); code != 400 || p["type"] != pixsim.ProblemRecInvalid {
		t.Errorf("dataInicial of an APROVADA recurrence: %d %v", code, p)
	}
	got = c.must(200, "PATCH", "/rec/"+approved, `{"status":"CANCELADA"}`)
	if got["status"] != "CANCELADA" || str(got, "encerramento", "cancelamento", "solicitante") != "USUARIO_RECEBEDOR" ||
		str(got, "encerramento", "cancelamento", "codigo") != "SLCR" {
		t.Errorf("cancellation: %v", got)
	}
	if code, p := c.do("PATCH", "/rec/"+approved, `{"vinculo":{"devedor":{"nome":"Y"}}}`); code != 400 || p["type"] != pixsim.ProblemRecInvalid {
		t.Errorf("revising a CANCELADA recurrence: %d %v", code, p)
	}
}

// Rule: GET /rec/{idRec} gives a recurrence with a location the composite
// QR code of journey 2 (no txid), 3 (the txid of a cob) or 4 (a cobv),
// each a BR Code with a valid CRC whose tag 80 holds the recurrence's
// location; a txid that fits no journey is 400 RecConsultaInvalida.
func TestRecCompositeQRCodes(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	cob := domain.DeriveTxID("pixsim", "qr-cob")
	c.must(201, "PUT", "/cob/"+cob, cobBody)
	cobv := domain.DeriveTxID("pixsim", "qr-cobv")
	c.must(201, "PUT", "/cobv/"+cobv, cobvBody)
	loc := c.must(201, "POST", "/locrec", "")
	id := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+jsonNum(loc["id"]))), "idRec")
	cobLoc, _ := sim.CobByTxID(cob)
	cobvLoc, _ := sim.CobVByTxID(cobv)
	for _, tc := range []struct{ query, journey, pays string }{
		{"", "JORNADA_2", ""}, {"?txid=" + cob, "JORNADA_3", cobLoc.Locat}, {"?txid=" + cobv, "JORNADA_4", cobvLoc.Locat},
	} {
		got := c.must(200, "GET", "/rec/"+id+tc.query, "")
		qr := str(got, "dadosQR", "pixCopiaECola")
		n := len(qr)
		crc := fmt.Sprintf("%04X", brcode.CRC16CCITT([]byte(qr[:n-4])))
		recTag := "80" + fmt.Sprintf("%02d", 18+4+len(str(loc, "location"))) + "0014br.gov.bcb.pix25"
		if str(got, "dadosQR", "jornada") != tc.journey || !strings.Contains(qr, recTag+fmt.Sprint(len(str(loc, "location")))+str(loc, "location")) ||
			!strings.Contains(qr, tc.pays) || qr[n-4:] != crc {
			t.Errorf("%q: %v", tc.query, got["dadosQR"])
		}
		if tc.pays != "" {
			if _, err := brcode.Parse(qr); err != nil {
				t.Errorf("%s: %v", tc.journey, err)
			}
		}
	}
	if code, p := c.do("GET", "/rec/"+id+"?txid="+domain.DeriveTxID("none"), ""); code != 400 || p["type"] != pixsim.ProblemRecQuery {
		t.Errorf("a txid of no charge: %d %v", code, p)
	}
	j3 := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+jsonNum(c.must(201, "POST", "/locrec", "")["id"])+
		`,"ativacao":{"dadosJornada":{"txid":"`+domain.DeriveTxID("pixsim", "other")+`"}}`)), "idRec")
	if code, p := c.do("GET", "/rec/"+j3+"?txid="+cob, ""); code != 400 || p["type"] != pixsim.ProblemRecQuery {
		t.Errorf("a cob other than the journey's: %d %v", code, p)
	}
	if got := c.must(200, "GET", "/rec/"+str(c.must(201, "POST", "/rec", recBody), "idRec"), ""); got["dadosQR"] != nil {
		t.Errorf("a recurrence without location has dadosQR %v", got["dadosQR"])
	}
}

// Rule: the payload location serves the recurrence, to anyone, as a JWS
// signed with the key of its jku; a recurrence that ended is 400
// RecPayloadOperacaoInvalida and a location serving none 404
// RecPayloadNaoEncontrado.
func TestRecPayloadLocation(t *testing.T) {
	t.Parallel()
	sim, c, _ := startAuto(t, pixsim.Config{})
	loc := c.must(201, "POST", "/locrec", "")
	path := strings.TrimPrefix(str(loc, "location"), "pixsim.local")
	anon := &autoClient{t: t, base: c.base, hc: c.hc}
	if code, p := anon.do("GET", path, ""); code != 404 || p["type"] != pixsim.ProblemRecPayloadNotFound {
		t.Errorf("a location without recurrence: %d %v", code, p)
	}
	id := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+jsonNum(loc["id"]))), "idRec")
	code, h, jws := anon.raw("GET", path, "")
	parts := strings.Split(jws, ".")
	if code != 200 || h.Get("Content-Type") != "application/jose" || len(parts) != 3 {
		t.Fatalf("payload: %d %v %s", code, h, jws)
	}
	key, err := sim.RecPayloadKey()
	if err != nil {
		t.Fatal(err)
	}
	sig, _ := base64.RawURLEncoding.DecodeString(parts[2])
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if err := rsa.VerifyPKCS1v15(key, crypto.SHA256, sum[:], sig); err != nil {
		t.Errorf("signature: %v", err)
	}
	var header map[string]string
	var payload pixsim.RecPayload
	hb, _ := base64.RawURLEncoding.DecodeString(parts[0])
	pb, _ := base64.RawURLEncoding.DecodeString(parts[1])
	_ = json.Unmarshal(hb, &header)
	_ = json.Unmarshal(pb, &payload)
	if header["alg"] != "RS256" || header["jku"] != "https://pixsim.local/qr/v2/rec/jwks.json" || payload.IDRec != id ||
		payload.Recebedor.ISPBParticipante != "99999998" || payload.PoliticaRetentativa != "NAO_PERMITE" {
		t.Errorf("header %v payload %+v", header, payload)
	}
	plain := &autoClient{t: t, base: c.base, hc: http.DefaultClient}
	keys := plain.must(200, "GET", "/qr/v2/rec/jwks.json", "")
	if k, _ := keys["keys"].([]any); len(k) != 1 || str(k[0].(map[string]any), "kid") != header["kid"] {
		t.Errorf("JWKS %v, want the kid %s", keys, header["kid"])
	}
	c.must(200, "PATCH", "/rec/"+id, `{"status":"CANCELADA"}`)
	if code, p := anon.do("GET", path, ""); code != 400 || p["type"] != pixsim.ProblemRecPayloadInvalid {
		t.Errorf("a CANCELADA recurrence: %d %v", code, p)
	}
	if code, _ := plain.do("GET", "/rec/"+id, ""); code != 401 {
		t.Errorf("GET /rec/{idRec} without a token: %d, want 401", code)
	}
}

// Rule: with a location host without a path, payloads share GET
// /rec/{x} with the API: a location's token is served openly, an idRec
// still needs a token.
func TestRecPayloadWithoutPathPrefix(t *testing.T) {
	t.Parallel()
	_, c, _ := startAuto(t, pixsim.Config{LocationHost: "psp.example"})
	loc := c.must(201, "POST", "/locrec", "")
	id := str(c.must(201, "POST", "/rec", recWith("NAO_PERMITE", `"loc":`+jsonNum(loc["id"]))), "idRec")
	plain := &autoClient{t: t, base: c.base, hc: http.DefaultClient}
	token := strings.TrimPrefix(str(loc, "location"), "psp.example/rec/")
	if code, h, _ := plain.raw("GET", "/rec/"+token, ""); code != 200 || h.Get("Content-Type") != "application/jose" {
		t.Errorf("payload at /rec/{token}: %d %v", code, h)
	}
	if code, _, _ := plain.raw("GET", "/rec/"+id, ""); code != 401 {
		t.Errorf("GET /rec/{idRec} without a token: %d", code)
	}
	plain.token = c.token
	if code, _, _ := plain.raw("GET", "/rec/"+id, ""); code != 200 {
		t.Errorf("GET /rec/{idRec}: %d", code)
	}
}
