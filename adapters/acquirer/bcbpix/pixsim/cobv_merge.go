package pixsim

import (
	"encoding/json"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix/cobv"
)

// maxCobVBody bounds a cobv request's body.
const maxCobVBody = 1 << 20

// mergeCalendario applies a PATCH's calendario to cur: each member the
// body names (sent) takes the body's value; a member sent as null is
// cleared (validadeAposVencimento then reads 30 again).
func mergeCalendario(cur *cobv.Calendario, patch cobv.Calendario, sent map[string]json.RawMessage) {
	if _, ok := sent["dataDeVencimento"]; ok {
		cur.DataDeVencimento = patch.DataDeVencimento
	}
	if _, ok := sent["validadeAposVencimento"]; ok {
		cur.ValidadeAposVencimento = patch.ValidadeAposVencimento
	}
}

// mergeValor applies a PATCH's valor to cur: original when sent, and each
// rule (multa, juros, abatimento, desconto) the body names replaced whole,
// or removed when sent as null. A rule the body leaves out is kept.
func mergeValor(cur *cobv.Valor, patch cobv.Valor, sent map[string]json.RawMessage) {
	if _, ok := sent["original"]; ok {
		cur.Original = patch.Original
	}
	if _, ok := sent["multa"]; ok {
		cur.Multa = patch.Multa
	}
	if _, ok := sent["juros"]; ok {
		cur.Juros = patch.Juros
	}
	if _, ok := sent["abatimento"]; ok {
		cur.Abatimento = patch.Abatimento
	}
	if _, ok := sent["desconto"]; ok {
		cur.Desconto = patch.Desconto
	}
}
