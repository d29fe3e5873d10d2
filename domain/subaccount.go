package domain

import (
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// SubaccountFields are what a platform says about one of its sellers:
// the name, the CPF or CNPJ, a contact e-mail and, optionally, the Pix key
// it is paid out to.
type SubaccountFields struct {
	Name         string
	Document     string
	Email        string
	PayoutPixKey string
	// AutoPayout pays the sub-account's live available balance out to its
	// payout key once a day; it needs a payout key.
	AutoPayout bool
}

// SubaccountChange is an update of a sub-account: a nil field is left as
// it is; an empty PayoutPixKey clears the key.
type SubaccountChange struct {
	Name         *string
	Email        *string
	PayoutPixKey *string
	AutoPayout   *bool
}

// ErrSubaccountDisabled: a disabled sub-account cannot be changed.
var ErrSubaccountDisabled = errors.New("sub-account is disabled")

// NewSubaccount validates f and returns the sub-account id of the platform
// parent: document normalised (check digits verified), e-mail as given,
// Pix key normalised with its type detected. Errors name FieldAccountName,
// FieldSubaccountDoc, FieldAccountEmail, FieldSubaccountPixKey or
// FieldAutoPayout (on without a payout key) and never repeat the document
// or the key.
func NewSubaccount(id, parent string, f SubaccountFields, now time.Time) (Account, error) {
	name, err := subaccountName(f.Name)
	if err != nil {
		return Account{}, err
	}
	if strings.TrimSpace(f.Document) == "" {
		return Account{}, Missing(FieldSubaccountDoc)
	}
	doc, err := ParseTaxID(f.Document)
	if err != nil {
		return Account{}, Invalid(FieldSubaccountDoc, "%s must be a valid CPF or CNPJ", FieldSubaccountDoc)
	}
	email, err := subaccountEmail(f.Email)
	if err != nil {
		return Account{}, err
	}
	key, err := subaccountPixKey(f.PayoutPixKey)
	if err != nil {
		return Account{}, err
	}
	a := Account{ID: id, Name: name, MerchantName: name, Document: doc.Value, Email: email, PayoutPixKey: key,
		AutoPayout: f.AutoPayout, ParentAccountID: parent, CreatedAt: now.UTC()}
	return a, checkAutoPayout(a)
}

// checkAutoPayout refuses automatic payouts without a key to pay to.
func checkAutoPayout(a Account) error {
	if a.AutoPayout && a.PayoutPixKey.Value == "" {
		return Invalid(FieldAutoPayout, "%s needs a payout pix key: set one, or turn automatic payouts off", FieldAutoPayout)
	}
	return nil
}

// ApplySubaccountChange validates ch and applies it to a, a live
// sub-account. ErrSubaccountDisabled for a disabled one.
func ApplySubaccountChange(a Account, ch SubaccountChange) (Account, error) {
	if a.DisabledAt != nil {
		return Account{}, ErrSubaccountDisabled
	}
	if ch.Name != nil {
		name, err := subaccountName(*ch.Name)
		if err != nil {
			return Account{}, err
		}
		a.Name, a.MerchantName = name, name
	}
	if ch.Email != nil {
		email, err := subaccountEmail(*ch.Email)
		if err != nil {
			return Account{}, err
		}
		a.Email = email
	}
	if ch.PayoutPixKey != nil {
		key, err := subaccountPixKey(*ch.PayoutPixKey)
		if err != nil {
			return Account{}, err
		}
		a.PayoutPixKey = key
	}
	if ch.AutoPayout != nil {
		a.AutoPayout = *ch.AutoPayout
	}
	return a, checkAutoPayout(a)
}

func subaccountName(s string) (string, error) {
	name := strings.TrimSpace(s)
	switch {
	case name == "":
		return "", Missing(FieldAccountName)
	case utf8.RuneCountInString(name) > MaxNameLen:
		return "", Invalid(FieldAccountName, "%s must be at most %d characters", FieldAccountName, MaxNameLen)
	}
	if err := CheckText(FieldAccountName, name, false); err != nil {
		return "", err
	}
	return name, nil
}

func subaccountEmail(s string) (string, error) {
	switch {
	case s == "":
		return "", Missing(FieldAccountEmail)
	case len(s) > 254 || !ValidEmail(s):
		return "", Invalid(FieldAccountEmail, "%s is not a valid address", FieldAccountEmail)
	}
	return s, nil
}

// subaccountPixKey checks an optional payout key, naming the sub-account's
// field rather than a payout's destination.
func subaccountPixKey(s string) (PixKey, error) {
	if strings.TrimSpace(s) == "" {
		return PixKey{}, nil
	}
	key, err := ParsePixKey(s, "")
	if err != nil {
		return PixKey{}, Invalid(FieldSubaccountPixKey, "%s is not a valid CPF, CNPJ, e-mail, +55 phone or random (EVP) key", FieldSubaccountPixKey)
	}
	return key, nil
}

// PublicSubaccount is a sub-account as the API shows it to its platform:
// the document and the Pix key masked.
type PublicSubaccount struct {
	ID           string     `json:"id"`
	Object       string     `json:"object"`
	Name         string     `json:"name"`
	Document     string     `json:"document"`
	Email        string     `json:"email"`
	PayoutPixKey *string    `json:"payout_pix_key"`
	AutoPayout   bool       `json:"auto_payout"`
	Status       string     `json:"status"`
	CreatedAt    Timestamp  `json:"created_at"`
	DisabledAt   *Timestamp `json:"disabled_at"`
}

// Sub-account statuses on the wire.
const (
	SubaccountActive   = "active"
	SubaccountDisabled = "disabled"
)

// PublicSubaccount renders a sub-account.
func (a Account) PublicSubaccount() PublicSubaccount {
	doc, _ := MaskTaxID(a.Document)
	out := PublicSubaccount{ID: a.ID, Object: "subaccount", Name: a.Name, Document: doc, Email: a.Email,
		AutoPayout: a.AutoPayout, Status: SubaccountActive, CreatedAt: Timestamp(a.CreatedAt)}
	if a.PayoutPixKey.Value != "" {
		k := a.PayoutPixKey.Masked()
		out.PayoutPixKey = &k
	}
	if a.DisabledAt != nil {
		ts := Timestamp(*a.DisabledAt)
		out.Status, out.DisabledAt = SubaccountDisabled, &ts
	}
	return out
}

// ParseAccountID accepts "acct_<raw>" only: an account's id always carries
// its prefix.
func ParseAccountID(s string) (string, bool) {
	raw, ok := strings.CutPrefix(s, PrefixAccount)
	return s, ok && ValidRawID(raw)
}
