package domain

import "strings"

// Locale is the language of a document a person reads (a receipt). The
// values are API strings (the lang query parameter): add, never rename.
type Locale string

// The locales Quita writes documents in. Brazilian Portuguese is the
// default: Pix payers and merchants are in Brazil.
const (
	LocalePtBR Locale = "pt-BR"
	LocaleEN   Locale = "en"
)

// ParseLocale reads a lang parameter: "" and the spellings of Brazilian
// Portuguese ("pt-BR", "pt_br", "pt") give LocalePtBR; "en", "en-US" and
// the like give LocaleEN. Anything else is a FieldLang error.
func ParseLocale(s string) (Locale, error) {
	v := strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), "_", "-"))
	switch {
	case v == "" || v == "pt" || v == "pt-br":
		return LocalePtBR, nil
	case v == "en" || strings.HasPrefix(v, "en-"):
		return LocaleEN, nil
	}
	return "", Invalid(FieldLang, "%s must be pt-BR or en", FieldLang)
}

// MaskTaxID writes a CPF or CNPJ for display the way the Banco Central
// shows a Pix party's document: the leading digits and the check digits
// are hidden and the middle six stay, so a person can recognise their own
// document without the document being disclosed — "***.982.247-**" for a
// CPF, "**.345.678/0001-**" for a CNPJ (the branch stays too). Anything
// that is neither shape is hidden whole. The kind says which it was ("" for
// neither), so documents can label it.
func MaskTaxID(s string) (masked string, kind TaxIDKind) {
	v := NormalizeTaxID(s)
	switch len(v) {
	case 0:
		return "", ""
	case 11:
		return "***." + v[3:6] + "." + v[6:9] + "-**", TaxIDCPF
	case 14:
		return "**." + v[2:5] + "." + v[5:8] + "/" + v[8:12] + "-**", TaxIDCNPJ
	}
	return strings.Repeat("*", len([]rune(v))), ""
}
