package app

import (
	"crypto/sha256"
	"crypto/sha512"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/quitapix/quita/app/exactlyonce"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// batchInput is a batch item's create request as charge_batch_items.input
// keeps it until the item's charge is created: what a charges-surface
// create takes (Pix, the customer's document checked as a CPF/CNPJ), the
// metadata values as the exact JSON the merchant sent. Amounts are
// centavos, rates two-place decimal strings, dates YYYY-MM-DD.
type batchInput struct {
	Amount        int64                      `json:"amount"`
	Currency      string                     `json:"currency,omitempty"`
	Description   string                     `json:"description,omitempty"`
	ExpiresIn     *int64                     `json:"expires_in,omitempty"`
	Customer      batchCustomer              `json:"customer"`
	ExpectedPayer string                     `json:"expected_payer_tax_id,omitempty"`
	Metadata      map[string]json.RawMessage `json:"metadata,omitempty"`
	Due           *batchDue                  `json:"due,omitempty"`
}

type batchCustomer struct {
	Name     string `json:"name,omitempty"`
	Document string `json:"document,omitempty"`
	Email    string `json:"email,omitempty"`
	Phone    string `json:"phone,omitempty"`
}

type batchDue struct {
	Due          bizdays.Date    `json:"due_date"`
	DaysAfterDue *int            `json:"days_after_due,omitempty"`
	Fine         *batchRule      `json:"fine,omitempty"`
	Interest     *batchRule      `json:"interest,omitempty"`
	Discount     *batchRule      `json:"discount,omitempty"`
	Abatement    *batchRule      `json:"abatement,omitempty"`
	Until        []batchDiscount `json:"until,omitempty"`
}

type batchRule struct {
	Type         string `json:"type"`
	Amount       int64  `json:"amount,omitempty"`
	Rate         string `json:"rate,omitempty"`
	BusinessDays bool   `json:"business_days,omitempty"`
}

type batchDiscount struct {
	Date   bizdays.Date `json:"date"`
	Amount int64        `json:"amount,omitempty"`
	Rate   string       `json:"rate,omitempty"`
}

// encodeBatchInput is in as the item keeps it.
func encodeBatchInput(in CreateChargeInput) ([]byte, error) {
	b := batchInput{Amount: in.Amount, Currency: in.Currency, Description: in.Description, ExpiresIn: in.ExpiresIn,
		Customer:      batchCustomer{Name: in.Customer.Name, Document: in.Customer.Document, Email: in.Customer.Email, Phone: in.Customer.Phone},
		ExpectedPayer: in.ExpectedPayer}
	if len(in.Metadata) > 0 {
		b.Metadata = make(map[string]json.RawMessage, len(in.Metadata))
		for k, v := range in.Metadata {
			raw, ok := v.(json.RawMessage)
			if !ok {
				var err error
				if raw, err = json.Marshal(v); err != nil {
					return nil, fmt.Errorf("encode metadata %q: %w", k, err)
				}
			}
			b.Metadata[k] = raw
		}
	}
	if p := in.Due; p != nil {
		d := &batchDue{Due: p.Due, DaysAfterDue: p.DaysAfterDue}
		if f := p.Fine; f != nil {
			d.Fine = &batchRule{Type: string(f.Type), Amount: f.Amount, Rate: f.Rate}
		}
		if i := p.Interest; i != nil {
			d.Interest = &batchRule{Type: string(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
		}
		if x := p.Discount; x != nil {
			d.Discount = &batchRule{Type: string(x.Type), Amount: x.Amount, Rate: x.Rate, BusinessDays: x.BusinessDays}
			for _, u := range x.Until {
				d.Until = append(d.Until, batchDiscount(u))
			}
		}
		if a := p.Abatement; a != nil {
			d.Abatement = &batchRule{Type: string(a.Type), Amount: a.Amount, Rate: a.Rate}
		}
		b.Due = d
	}
	return json.Marshal(b)
}

// decodeBatchInput is the create request an item keeps.
func decodeBatchInput(raw []byte) (CreateChargeInput, error) {
	var b batchInput
	if err := json.Unmarshal(raw, &b); err != nil {
		return CreateChargeInput{}, fmt.Errorf("decode a batch item: %w", err)
	}
	in := CreateChargeInput{Amount: b.Amount, Currency: b.Currency, Methods: []domain.Method{domain.MethodPix},
		Description: b.Description, ExpiresIn: b.ExpiresIn, StrictDocument: true, ExpectedPayer: b.ExpectedPayer,
		Customer: domain.Customer{Name: b.Customer.Name, Document: b.Customer.Document, Email: b.Customer.Email, Phone: b.Customer.Phone}}
	if b.Metadata != nil {
		in.Metadata = make(map[string]any, len(b.Metadata))
		for k, v := range b.Metadata {
			in.Metadata[k] = v
		}
	}
	if d := b.Due; d != nil {
		p := &domain.DueTermsParams{Due: d.Due, DaysAfterDue: d.DaysAfterDue}
		if f := d.Fine; f != nil {
			p.Fine = &domain.Fine{Type: domain.FineType(f.Type), Amount: f.Amount, Rate: f.Rate}
		}
		if i := d.Interest; i != nil {
			p.Interest = &domain.Interest{Type: domain.InterestType(i.Type), Amount: i.Amount, Rate: i.Rate, BusinessDays: i.BusinessDays}
		}
		if x := d.Discount; x != nil {
			p.Discount = &domain.Discount{Type: domain.DiscountType(x.Type), Amount: x.Amount, Rate: x.Rate, BusinessDays: x.BusinessDays}
			for _, u := range d.Until {
				p.Discount.Until = append(p.Discount.Until, domain.DiscountUntil(u))
			}
		}
		if a := d.Abatement; a != nil {
			p.Abatement = &domain.Abatement{Type: domain.AbatementType(a.Type), Amount: a.Amount, Rate: a.Rate}
		}
		in.Due = p
	}
	return in, nil
}

// batchItemKey is the idempotency key of item index of batch id: every
// run of the item, in any process and after any crash, creates its charge
// under it, so the charge is created once. It is longer than the 128
// characters a request's key may have, so no request can use it.
func batchItemKey(id string, index int) string {
	sum := sha512.Sum512([]byte(id + "/" + strconv.Itoa(index)))
	return "charge_batch_item/" + domain.PrefixChargeBatch + id + "/" + fmt.Sprintf("%04d", index) + "/" + hex.EncodeToString(sum[:])
}

// batchItemFingerprint is the fingerprint of the item's create: the same
// for every run of it.
func batchItemFingerprint(id string, index int, input []byte) string {
	h := sha256.New()
	fmt.Fprintf(h, "charge batch item\x00%s\x00%d\x00", id, index)
	h.Write(input)
	return hex.EncodeToString(h.Sum(nil))
}

// batchItemTxID is the txid the item's cob is asked for under: the one its
// create derives from its key (exactlyonce.CheckedTxID), known before the
// create runs so the batch's request to the acquirer can name it.
func batchItemTxID(scope ports.Scope, id string, index int) string {
	return exactlyonce.CheckedTxID(ports.IdempotencyKey{Scope: scope, Key: batchItemKey(id, index)})
}
