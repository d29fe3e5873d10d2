package domain

import (
	"strings"
	"unicode/utf8"
)

// PixKeyType is the kind of a Pix key (chave Pix) in the DICT. The values
// are API strings: add, never rename.
type PixKeyType string

// The five kinds of Pix key.
const (
	PixKeyCPF   PixKeyType = "cpf"
	PixKeyCNPJ  PixKeyType = "cnpj"
	PixKeyEmail PixKeyType = "email"
	PixKeyPhone PixKeyType = "phone"
	PixKeyEVP   PixKeyType = "evp" // the random key, a UUID
)

// Valid reports whether t is one of the five kinds.
func (t PixKeyType) Valid() bool {
	switch t {
	case PixKeyCPF, PixKeyCNPJ, PixKeyEmail, PixKeyPhone, PixKeyEVP:
		return true
	}
	return false
}

// PixKey is a Pix key whose form has been checked, in the normalised
// spelling the DICT uses: CPF and CNPJ without punctuation (the CNPJ in
// upper case), e-mail in lower case, phone as +55 and digits, EVP as a
// lower-case UUID.
type PixKey struct {
	Type  PixKeyType
	Value string
}

// maxEmailKeyLen is the DICT's limit on an e-mail key.
const maxEmailKeyLen = 77

// validEmailKey applies the DICT's rule for an e-mail key to v, already in
// lower case: ASCII only, at most 77 characters, a dot-atom local part
// (letters, digits and !#$%&'*+/=?^_`{|}~- in dot-separated runs) and a
// domain of at least two labels of letters, digits and inner hyphens, each
// at most 63 long. No quoted local part, comment, address literal, space,
// control or non-ASCII character (a bidirectional override would show
// the key reversed) passes.
func validEmailKey(v string) bool {
	if len(v) > maxEmailKeyLen {
		return false
	}
	local, domain, ok := strings.Cut(v, "@")
	if !ok || !dotSeparated(local, 64, atextByte) {
		return false
	}
	labels := strings.Split(domain, ".")
	if len(labels) < 2 {
		return false
	}
	for _, l := range labels {
		if !dotSeparated(l, 63, labelByte) || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
	}
	return true
}

// dotSeparated reports whether s is runs of 1 to max bytes accepted by ok,
// separated by single dots (labels are passed without dots).
func dotSeparated(s string, max int, ok func(byte) bool) bool {
	if s == "" || len(s) > max || s[0] == '.' || s[len(s)-1] == '.' || strings.Contains(s, "..") {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '.' && !ok(s[i]) {
			return false
		}
	}
	return true
}

// atextByte is an RFC 5322 atext character in lower case.
func atextByte(c byte) bool {
	return labelByte(c) || strings.IndexByte("!#$%&'*+/=?^_`{|}~", c) >= 0
}

// ascii reports whether s holds only ASCII bytes.
func ascii(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// labelByte is a letter (lower case), digit or hyphen of a domain label.
func labelByte(c byte) bool {
	return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '-'
}

// ParsePixKey checks raw as a key of type t, or detects the type when t is
// empty: an e-mail has an @, a phone starts with +, an EVP is a UUID, and
// the rest must be a CPF or CNPJ with matching check digits (the
// alphanumeric CNPJ included). Errors name FieldPixKey (or
// FieldPixKeyType for an unknown type) and never repeat the key.
func ParsePixKey(raw string, t PixKeyType) (PixKey, error) {
	s := strings.TrimSpace(raw)
	if s == "" {
		return PixKey{}, Missing(FieldPixKey)
	}
	if t != "" && !t.Valid() {
		return PixKey{}, Invalid(FieldPixKeyType, "%s must be one of cpf, cnpj, email, phone, evp", FieldPixKeyType)
	}
	if t == "" {
		t = detectPixKeyType(s)
	}
	bad := func(what string) (PixKey, error) {
		return PixKey{}, Invalid(FieldPixKey, "%s is not a valid %s", FieldPixKey, what)
	}
	switch t {
	case PixKeyCPF:
		v := NormalizeTaxID(s)
		if !taxidValidCPF(v) {
			return bad("CPF")
		}
		return PixKey{Type: t, Value: v}, nil
	case PixKeyCNPJ:
		v := NormalizeTaxID(s)
		if !taxidValidCNPJ(v) {
			return bad("CNPJ")
		}
		return PixKey{Type: t, Value: v}, nil
	case PixKeyEmail:
		// ASCII is checked before lowering: strings.ToLower maps some
		// non-ASCII letters (the Kelvin sign) to ASCII ones.
		v := strings.ToLower(s)
		if !ascii(s) || !validEmailKey(v) {
			return bad("e-mail key (ASCII, at most 77 characters, such as name@example.com)")
		}
		return PixKey{Type: t, Value: v}, nil
	case PixKeyPhone:
		v := strings.NewReplacer(" ", "", "-", "", "(", "", ")", "").Replace(s)
		if !validBRPhoneKey(v) {
			return bad("phone key (+55, area code and number, e.g. +5511987654321)")
		}
		return PixKey{Type: t, Value: v}, nil
	case PixKeyEVP:
		v := strings.ToLower(s)
		if !validUUID(v) {
			return bad("random (EVP) key")
		}
		return PixKey{Type: t, Value: v}, nil
	}
	return PixKey{}, Invalid(FieldPixKey, "%s is not a CPF, CNPJ, e-mail, +55 phone or random (EVP) key", FieldPixKey)
}

// detectPixKeyType guesses the type of a key without one; "" when the key
// has no recognisable form.
func detectPixKeyType(s string) PixKeyType {
	switch {
	case strings.Contains(s, "@"):
		return PixKeyEmail
	case strings.HasPrefix(s, "+"):
		return PixKeyPhone
	case validUUID(strings.ToLower(s)):
		return PixKeyEVP
	}
	// Eleven digits are a CPF and fourteen characters a CNPJ, valid or
	// not: a wrong check digit then says "not a valid CPF".
	switch v := NormalizeTaxID(s); {
	case len(v) == 11 && allDigits(v):
		return PixKeyCPF
	case len(v) == 14 && allDigits(v[12:]):
		return PixKeyCNPJ
	}
	return ""
}

// validBRPhoneKey checks +55, a two-digit area code (11 to 99) and an
// eight- or nine-digit number.
func validBRPhoneKey(v string) bool {
	rest, ok := strings.CutPrefix(v, "+55")
	return ok && (len(rest) == 10 || len(rest) == 11) && allDigits(rest) && rest[0] != '0' && rest[1] != '0'
}

// validUUID checks the 8-4-4-4-12 lower-case hexadecimal form.
func validUUID(v string) bool {
	if len(v) != 36 || !utf8.ValidString(v) {
		return false
	}
	for i := 0; i < len(v); i++ {
		c := v[i]
		switch i {
		case 8, 13, 18, 23:
			if c != '-' {
				return false
			}
		default:
			if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
				return false
			}
		}
	}
	return true
}

// Masked is the key as the API and the webhooks show it: enough to
// recognise it, not enough to use it. CPF ***.982.247-**, CNPJ
// **.345.678/0001-**, e-mail j***@example.com, phone +5511*****4321. An EVP
// is random and says nothing about its owner, so it is shown in full.
func (k PixKey) Masked() string {
	v := k.Value
	switch k.Type {
	case PixKeyCPF, PixKeyCNPJ:
		if m, kind := MaskTaxID(v); string(kind) == string(k.Type) {
			return m
		}
	case PixKeyEmail:
		if at := strings.LastIndexByte(v, '@'); at > 0 {
			r, _ := utf8.DecodeRuneInString(v)
			return string(r) + "***" + v[at:]
		}
	case PixKeyPhone:
		if len(v) >= 9 {
			return v[:5] + strings.Repeat("*", len(v)-9) + v[len(v)-4:]
		}
	case PixKeyEVP:
		return v
	}
	return strings.Repeat("*", len(v))
}
