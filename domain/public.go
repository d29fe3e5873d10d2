package domain

import (
	"regexp"
	"strings"
	"time"
)

// Timestamp is an instant rendered as ISO 8601 in UTC with milliseconds,
// the one time format of the API.
type Timestamp time.Time

// TimestampLayout is the wire layout of every timestamp.
const TimestampLayout = "2006-01-02T15:04:05.000Z"

// MarshalText implements encoding.TextMarshaler.
func (t Timestamp) MarshalText() ([]byte, error) {
	return []byte(time.Time(t).UTC().Format(TimestampLayout)), nil
}

// UnmarshalText accepts any RFC 3339 time.
func (t *Timestamp) UnmarshalText(b []byte) error {
	v, err := time.Parse(time.RFC3339Nano, string(b))
	if err != nil {
		return err
	}
	*t = Timestamp(v.UTC())
	return nil
}

// Links turns raw ids into the public addresses of a charge's hosted pages.
type Links struct {
	// CheckoutBase is {checkout_url_base}, without a trailing slash.
	CheckoutBase string
}

// CheckoutURL is the hosted checkout of a charge: the base and the raw id,
// so it cannot be derived from the public ch_ id by guessing.
func (l Links) CheckoutURL(rawID string) string {
	return strings.TrimRight(l.CheckoutBase, "/") + "/" + rawID
}

// QRCodeURL is the public, unguessable address of a charge's QR PNG.
func (l Links) QRCodeURL(rawID string) string {
	return l.CheckoutURL(rawID) + "/qr.png"
}

// PublicCharge is the charge as the /v1/charges surface and the canonical
// webhooks show it: an allowlist, with no internal id, provider, fee, cost
// or raw provider data.
type PublicCharge struct {
	ID                 string           `json:"id"`
	Object             string           `json:"object"`
	Amount             int64            `json:"amount"`
	Currency           Currency         `json:"currency"`
	Status             Status           `json:"status"`
	PaymentMethod      string           `json:"payment_method"`
	Customer           PublicCustomer   `json:"customer"`
	Pix                *PublicPix       `json:"pix,omitempty"`
	CheckoutURL        string           `json:"checkout_url"`
	Settlement         PublicSettlement `json:"settlement"`
	Disputes           []PublicDispute  `json:"disputes,omitempty"`
	Metadata           map[string]any   `json:"metadata"`
	ExpectedPayerTaxID string           `json:"expected_payer_tax_id,omitempty"`
	// The terms of a due-date charge; absent for an immediate charge.
	DueDate      string         `json:"due_date,omitempty"`
	DaysAfterDue *int           `json:"days_after_due,omitempty"`
	Fine         *PublicDueRule `json:"fine,omitempty"`
	Interest     *PublicDueRule `json:"interest,omitempty"`
	Discount     *PublicDueRule `json:"discount,omitempty"`
	Abatement    *PublicDueRule `json:"abatement,omitempty"`
	// Paid is the amount a credited due-date charge was paid, and its parts.
	Paid *PublicDuePaid `json:"paid,omitempty"`
	// Subscription links the charge of a subscription's cycle or first
	// payment; absent for any other charge.
	Subscription *PublicChargeSubscription `json:"subscription,omitempty"`
	// Splits and FeePayer share a platform's charge among its
	// sub-accounts (split.go); absent for any other charge.
	Splits    []PublicSplit `json:"splits,omitempty"`
	FeePayer  *FeePayer     `json:"fee_payer,omitempty"`
	CreatedAt Timestamp     `json:"created_at"`
}

// PublicCustomer carries the customer fields the merchant sent.
type PublicCustomer struct {
	Name     string `json:"name,omitempty"`
	Document string `json:"document,omitempty"`
	Email    string `json:"email,omitempty"`
	Phone    string `json:"phone,omitempty"`
}

// PublicPix is the pix block of a public charge.
type PublicPix struct {
	BRCode    string    `json:"br_code"`
	QRCodeURL string    `json:"qr_code_url,omitempty"`
	ExpiresAt Timestamp `json:"expires_at"`
	TxID      string    `json:"txid,omitempty"`
}

// PublicDispute is money the payer's PSP took back from the charge's
// payment without the merchant asking (a MED return).
type PublicDispute struct {
	Amount     int64         `json:"amount"`
	Reason     DisputeReason `json:"reason"`
	EndToEndID string        `json:"end_to_end_id"`
	ReturnID   string        `json:"return_id"`
	ReturnedAt Timestamp     `json:"returned_at"`
}

// PublicSettlement is {} until the charge is paid.
type PublicSettlement struct {
	EndToEndID string `json:"end_to_end_id,omitempty"`
}

// Public renders the charge for the charges surface.
func (c *Charge) Public(l Links) PublicCharge {
	s := c.s
	out := PublicCharge{
		ID:            PrefixCharge + s.ID,
		Object:        "charge",
		Amount:        s.Amount,
		Currency:      s.Currency,
		Status:        s.Status.Public(),
		PaymentMethod: "pix",
		Customer: PublicCustomer{
			Name: s.Customer.Name, Document: s.Customer.Document,
			Email: s.Customer.Email, Phone: s.Customer.Phone,
		},
		CheckoutURL:        l.CheckoutURL(s.ID),
		Metadata:           s.Metadata,
		ExpectedPayerTaxID: s.ExpectedPayer,
		CreatedAt:          Timestamp(s.CreatedAt),
	}
	if out.Metadata == nil {
		out.Metadata = map[string]any{}
	}
	if s.Pix != nil {
		out.Pix = &PublicPix{
			BRCode:    s.Pix.BRCode,
			QRCodeURL: l.QRCodeURL(s.ID),
			ExpiresAt: Timestamp(s.ExpiresAt),
			TxID:      s.Pix.TxID,
		}
	}
	if c.credited() {
		out.Settlement.EndToEndID = s.Settlement.EndToEndID
	}
	for _, d := range s.Disputes {
		out.Disputes = append(out.Disputes, PublicDispute{Amount: d.Amount, Reason: d.Reason, EndToEndID: d.EndToEndID,
			ReturnID: d.ReturnID, ReturnedAt: Timestamp(d.At)})
	}
	c.publicDue(&out)
	c.publicSubscription(&out)
	c.publicSplits(&out)
	return out
}

// Masked hides documents for list responses: list pages travel further
// (exports, logs, dashboards) than single reads, so documents show only
// their last two characters there.
func (p PublicCharge) Masked() PublicCharge {
	p.Customer.Document = MaskDocument(p.Customer.Document)
	p.ExpectedPayerTaxID = MaskDocument(p.ExpectedPayerTaxID)
	return p
}

// documentMember matches a JSON member that carries a document in the
// envelopes Quita writes: the charge's customer.document and
// expected_payer_tax_id, the legacy customerDocument. Compact JSON only
// (what json.Marshal writes): inside a string every quote is escaped, so
// the pattern cannot match within a value.
var documentMember = regexp.MustCompile(`"(document|expected_payer_tax_id|customerDocument)":"([^"\\]*)"`)

// MaskDocumentsInJSON masks, with MaskDocument, every document member of a
// compact JSON envelope, keeping everything else byte for byte (member
// order included). A metadata key of the same name is masked too: a list
// may hide more, never less.
func MaskDocumentsInJSON(payload []byte) []byte {
	return documentMember.ReplaceAllFunc(payload, func(m []byte) []byte {
		sub := documentMember.FindSubmatch(m)
		return []byte(`"` + string(sub[1]) + `":"` + MaskDocument(string(sub[2])) + `"`)
	})
}

// MaskDocument keeps the last two characters of a document.
func MaskDocument(s string) string {
	if s == "" {
		return ""
	}
	n := NormalizeTaxID(s)
	if len(n) <= 2 {
		return strings.Repeat("*", len(n))
	}
	return strings.Repeat("*", len(n)-2) + n[len(n)-2:]
}
