package domain

import "strings"

// PayerAccount is a payer's account at their bank: where the API Pix sends
// an authorization_request's request (solicrec.destinatario). Its number
// is shown only masked (LastDigits).
type PayerAccount struct {
	// ISPB is the bank's (8 characters of [0-9A-Z]).
	ISPB   string
	Branch string
	Number string
}

// Limits of a payer's account, the API Pix's destinatario.
const (
	payerISPBLen      = 8
	maxPayerBranchLen = 4
	maxPayerNumberLen = 20
	// payerNumberShown is how many of the number's last digits are shown.
	payerNumberShown = 4
)

// validate checks each field, trimmed of surrounding spaces.
func (a PayerAccount) validate() (PayerAccount, error) {
	a = PayerAccount{ISPB: strings.TrimSpace(a.ISPB), Branch: strings.TrimSpace(a.Branch), Number: strings.TrimSpace(a.Number)}
	switch {
	case a.ISPB == "":
		return a, Missing(FieldPayerISPB)
	case len(a.ISPB) != payerISPBLen || !upperAlnum(a.ISPB):
		return a, Invalid(FieldPayerISPB, "%s must be %d characters of 0-9 and A-Z", FieldPayerISPB, payerISPBLen)
	case a.Branch == "":
		return a, Missing(FieldPayerBranch)
	case len(a.Branch) > maxPayerBranchLen || !allDigits(a.Branch):
		return a, Invalid(FieldPayerBranch, "%s must be 1 to %d digits", FieldPayerBranch, maxPayerBranchLen)
	case a.Number == "":
		return a, Missing(FieldPayerNumber)
	case len(a.Number) > maxPayerNumberLen || !allDigits(a.Number):
		return a, Invalid(FieldPayerNumber, "%s must be 1 to %d digits", FieldPayerNumber, maxPayerNumberLen)
	}
	return a, nil
}

// LastDigits is the account number as it may be shown: its last four
// digits (all of a shorter one's but the first).
func (a PayerAccount) LastDigits() string {
	n := min(payerNumberShown, len(a.Number)-1)
	if n <= 0 {
		return ""
	}
	return a.Number[len(a.Number)-n:]
}

func upperAlnum(s string) bool {
	for _, r := range s {
		if (r < '0' || r > '9') && (r < 'A' || r > 'Z') {
			return false
		}
	}
	return true
}
