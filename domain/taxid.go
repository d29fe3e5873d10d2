package domain

import (
	"errors"
	"fmt"
	"strings"
)

// ErrTaxIDInvalid is returned when a string is neither a CPF nor a CNPJ with
// matching check digits. The payer lock compares tax ids, so an id that
// cannot be checked must be refused rather than stored and never matched.
var ErrTaxIDInvalid = errors.New("invalid CPF or CNPJ")

// TaxIDKind says which Receita Federal register a tax id belongs to. The
// values are API strings: add, never rename.
type TaxIDKind string

// The two kinds of Brazilian tax id a Pix payer or merchant can hold.
const (
	TaxIDCPF  TaxIDKind = "cpf"  // individual, 11 digits
	TaxIDCNPJ TaxIDKind = "cnpj" // company, 14 characters, possibly alphanumeric
)

// TaxID is a CPF or CNPJ whose check digits have been verified. Value is in
// normalised form (see NormalizeTaxID) so two spellings of the same id
// compare equal.
type TaxID struct {
	Kind  TaxIDKind
	Value string
}

// NormalizeTaxID removes the punctuation people and banks add ("." "-" "/"
// and white space) and upper-cases letters, since the alphanumeric CNPJ is
// defined in upper case. It does not validate: the payer lock normalises
// what the bank reports before comparing, valid or not.
func NormalizeTaxID(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	for _, r := range s {
		switch r {
		case '.', '-', '/', ' ', '\t', '\n', '\r', '\u00a0':
			continue
		}
		if r >= 'a' && r <= 'z' {
			r -= 'a' - 'A'
		}
		b.WriteRune(r)
	}
	return b.String()
}

// ParseTaxID normalises s and returns it as a CPF (11 digits) or CNPJ (14
// characters, alphanumeric since July 2026) after checking its digits.
// Errors wrap ErrTaxIDInvalid and never repeat the id, which is personal
// data that must stay out of logs.
func ParseTaxID(s string) (TaxID, error) {
	v := NormalizeTaxID(s)
	switch len(v) {
	case 11:
		if !taxidValidCPF(v) {
			return TaxID{}, fmt.Errorf("%w: not a valid CPF", ErrTaxIDInvalid)
		}
		return TaxID{Kind: TaxIDCPF, Value: v}, nil
	case 14:
		if !taxidValidCNPJ(v) {
			return TaxID{}, fmt.Errorf("%w: not a valid CNPJ", ErrTaxIDInvalid)
		}
		return TaxID{Kind: TaxIDCNPJ, Value: v}, nil
	default:
		return TaxID{}, fmt.Errorf("%w: %d characters, want 11 (CPF) or 14 (CNPJ)", ErrTaxIDInvalid, len(v))
	}
}

// ValidCPF reports whether s, punctuation allowed, is a CPF with matching
// check digits. Sequences of one repeated digit pass the arithmetic but are
// not issued, so they are rejected.
func ValidCPF(s string) bool { return taxidValidCPF(NormalizeTaxID(s)) }

// ValidCNPJ reports whether s, punctuation allowed, is a CNPJ with matching
// check digits, in the numeric or the alphanumeric format (each base
// character counts as its ASCII code minus 48, so digits keep their value).
func ValidCNPJ(s string) bool { return taxidValidCNPJ(NormalizeTaxID(s)) }

// Masked keeps the last two characters and hides the rest, so logs can tell
// ids apart without holding personal data.
func (t TaxID) Masked() string {
	if len(t.Value) <= 2 {
		return strings.Repeat("*", len(t.Value))
	}
	return strings.Repeat("*", len(t.Value)-2) + t.Value[len(t.Value)-2:]
}

var (
	taxidCPFWeights1  = []int{10, 9, 8, 7, 6, 5, 4, 3, 2}
	taxidCPFWeights2  = []int{11, 10, 9, 8, 7, 6, 5, 4, 3, 2}
	taxidCNPJWeights1 = []int{5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
	taxidCNPJWeights2 = []int{6, 5, 4, 3, 2, 9, 8, 7, 6, 5, 4, 3, 2}
)

// taxidValidCPF checks a normalised CPF.
func taxidValidCPF(v string) bool {
	if len(v) != 11 || taxidSameChar(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return taxidCheckDigit(v, taxidCPFWeights1) == v[9] && taxidCheckDigit(v, taxidCPFWeights2) == v[10]
}

// taxidValidCNPJ checks a normalised CNPJ: 12 base characters [0-9A-Z] and
// two numeric check digits.
func taxidValidCNPJ(v string) bool {
	if len(v) != 14 || taxidSameChar(v) {
		return false
	}
	for i := 0; i < 12; i++ {
		c := v[i]
		if (c < '0' || c > '9') && (c < 'A' || c > 'Z') {
			return false
		}
	}
	for i := 12; i < 14; i++ {
		if v[i] < '0' || v[i] > '9' {
			return false
		}
	}
	return taxidCheckDigit(v, taxidCNPJWeights1) == v[12] && taxidCheckDigit(v, taxidCNPJWeights2) == v[13]
}

// taxidCheckDigit computes the modulo-11 digit over the first len(weights)
// characters of v, valuing each as its ASCII code minus 48.
func taxidCheckDigit(v string, weights []int) byte {
	sum := 0
	for i, w := range weights {
		sum += int(v[i]-'0') * w
	}
	r := sum % 11
	if r < 2 {
		return '0'
	}
	return byte('0' + 11 - r)
}

func taxidSameChar(v string) bool {
	for i := 1; i < len(v); i++ {
		if v[i] != v[0] {
			return false
		}
	}
	return true
}
