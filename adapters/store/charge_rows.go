package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
)

// Row structs are the tables' shapes. They stay unexported; the domain and
// the ports never see a bun tag.

type chargeRow struct {
	bun.BaseModel `bun:"table:charges,alias:c"`

	ID                   string  `bun:"id,pk"`
	AccountID            string  `bun:"account_id"`
	Mode                 string  `bun:"mode"`
	Amount               int64   `bun:"amount"`
	Currency             string  `bun:"currency"`
	Methods              string  `bun:"methods"` // JSON
	Status               string  `bun:"status"`
	Description          string  `bun:"description"`
	CustomerName         string  `bun:"customer_name"`
	CustomerDocument     string  `bun:"customer_document"`
	CustomerDocumentNorm string  `bun:"customer_document_norm"`
	CustomerEmail        string  `bun:"customer_email"`
	CustomerPhone        string  `bun:"customer_phone"`
	CustomerRef          string  `bun:"customer_ref"`
	ExpectedPayer        string  `bun:"expected_payer"`
	Metadata             string  `bun:"metadata"` // JSON
	WebhookURL           string  `bun:"webhook_url"`
	Provider             string  `bun:"provider"`
	ProviderRef          string  `bun:"provider_ref"`
	PixBRCode            *string `bun:"pix_br_code"`
	PixTxID              *string `bun:"pix_txid"`
	PixLocation          *string `bun:"pix_location"`
	PixExpiresAt         dbTime  `bun:"pix_expires_at"`
	SettlementEndToEndID *string `bun:"settlement_end_to_end_id"`
	SettlementAmount     *int64  `bun:"settlement_amount"`
	SettlementPaidAt     dbTime  `bun:"settlement_paid_at"`
	SettlementPaidWith   *string `bun:"settlement_paid_with"`
	SettlementPayerTaxID *string `bun:"settlement_payer_tax_id"`
	SettlementPayerName  *string `bun:"settlement_payer_name"`
	FeeProvider          int64   `bun:"fee_provider"`
	FeePlatform          int64   `bun:"fee_platform"`
	RefundedAmount       int64   `bun:"refunded_amount"`
	RefundCompleted      int64   `bun:"refund_completed"`
	CardRedirectURL      *string `bun:"card_redirect_url"`
	MBEntity             *string `bun:"mb_entity"`
	MBReference          *string `bun:"mb_reference"`
	MBExpiresAt          dbTime  `bun:"mb_expires_at"`
	BoletoBarcode        *string `bun:"boleto_barcode"`
	BoletoLine           *string `bun:"boleto_line"`
	BoletoPDFURL         *string `bun:"boleto_pdf_url"`
	BoletoExpiresAt      dbTime  `bun:"boleto_expires_at"`
	CryptoAddress        *string `bun:"crypto_address"`
	CryptoNetwork        *string `bun:"crypto_network"`
	CryptoCurrency       *string `bun:"crypto_currency"`
	CryptoAmount         *string `bun:"crypto_amount"`
	MethodsPending       bool    `bun:"methods_pending"`
	ReturnState          string  `bun:"return_state"`
	Disputes             *string `bun:"disputes"`   // JSON, NULL when none
	DueTerms             *string `bun:"due_terms"`  // JSON, NULL for an immediate charge
	OverdueAt            dbTime  `bun:"overdue_at"` // NULL unless charge.overdue is still to be sent
	OverdueNotified      bool    `bun:"overdue_notified"`
	// SubscriptionID, SubscriptionCycle and SubscriptionDueDate link a
	// subscription's charge (charge_subscription_rows.go), NULL otherwise.
	SubscriptionID      *string `bun:"subscription_id"`
	SubscriptionCycle   *int64  `bun:"subscription_cycle"`
	SubscriptionDueDate *string `bun:"subscription_due_date"`
	// Splits is a split charge's splits (charge_split_rows.go), NULL
	// for any other charge.
	Splits    *string `bun:"splits"`
	ExpiresAt dbTime  `bun:"expires_at"`
	CreatedAt dbTime  `bun:"created_at"`
	UpdatedAt dbTime  `bun:"updated_at"`
}

// chargeImmutableColumns are never rewritten by UpdateCharge.
var chargeImmutableColumns = []string{"id", "account_id", "mode", "created_at"}

func chargeFromDomain(s domain.ChargeSnapshot) (*chargeRow, error) {
	methods, err := json.Marshal(s.Methods)
	if err != nil {
		return nil, fmt.Errorf("store: encode methods of charge %s: %w", s.ID, err)
	}
	metadata, err := json.Marshal(s.Metadata)
	if err != nil {
		return nil, fmt.Errorf("store: encode metadata of charge %s: %w", s.ID, err)
	}
	disputes, err := encodeDisputes(s.Disputes)
	if err != nil {
		return nil, fmt.Errorf("store: encode disputes of charge %s: %w", s.ID, err)
	}
	due, err := encodeDueTerms(s.Due)
	if err != nil {
		return nil, fmt.Errorf("store: encode due terms of charge %s: %w", s.ID, err)
	}
	splits, err := encodeSplits(s.Splits)
	if err != nil {
		return nil, fmt.Errorf("store: encode splits of charge %s: %w", s.ID, err)
	}
	r := &chargeRow{
		Splits:               splits,
		Disputes:             disputes,
		DueTerms:             due,
		OverdueAt:            overdueAt(s),
		OverdueNotified:      s.OverdueNotified,
		ID:                   s.ID,
		AccountID:            s.AccountID,
		Mode:                 string(s.Mode),
		Amount:               s.Amount,
		Currency:             string(s.Currency),
		Methods:              string(methods),
		Status:               string(s.Status),
		Description:          s.Description,
		CustomerName:         s.Customer.Name,
		CustomerDocument:     s.Customer.Document,
		CustomerDocumentNorm: domain.NormalizeTaxID(s.Customer.Document),
		CustomerEmail:        s.Customer.Email,
		CustomerPhone:        s.Customer.Phone,
		CustomerRef:          s.CustomerRef,
		ExpectedPayer:        s.ExpectedPayer,
		Metadata:             string(metadata),
		WebhookURL:           s.WebhookURL,
		Provider:             s.Provider,
		ProviderRef:          s.ProviderRef,
		FeeProvider:          s.Fees.Provider,
		FeePlatform:          s.Fees.Platform,
		RefundedAmount:       s.RefundedAmount,
		RefundCompleted:      s.RefundCompleted,
		CardRedirectURL:      optString(s.Details.CardRedirectURL),
		MBEntity:             optString(s.Details.MBEntity),
		MBReference:          optString(s.Details.MBReference),
		MBExpiresAt:          newDBTime(s.Details.MBExpiresAt),
		BoletoBarcode:        optString(s.Details.BoletoBarcode),
		BoletoLine:           optString(s.Details.BoletoLine),
		BoletoPDFURL:         optString(s.Details.BoletoPDFURL),
		BoletoExpiresAt:      newDBTime(s.Details.BoletoExpiresAt),
		CryptoAddress:        optString(s.Details.CryptoAddress),
		CryptoNetwork:        optString(s.Details.CryptoNetwork),
		CryptoCurrency:       optString(s.Details.CryptoCurrency),
		CryptoAmount:         optString(s.Details.CryptoAmount),
		MethodsPending:       s.MethodsPending,
		ReturnState:          string(s.ReturnState),
		ExpiresAt:            newDBTime(s.ExpiresAt),
		CreatedAt:            newDBTime(s.CreatedAt),
		UpdatedAt:            newDBTime(s.UpdatedAt),
	}
	r.SubscriptionID, r.SubscriptionCycle, r.SubscriptionDueDate = encodeChargeSubscription(s.Subscription)
	if p := s.Pix; p != nil {
		r.PixBRCode, r.PixTxID, r.PixLocation = &p.BRCode, &p.TxID, &p.Location
		r.PixExpiresAt = newDBTime(p.ExpiresAt)
	}
	if st := s.Settlement; st != nil {
		paidWith := string(st.PaidWith)
		r.SettlementEndToEndID, r.SettlementAmount = &st.EndToEndID, &st.Amount
		r.SettlementPaidAt = newDBTime(st.PaidAt)
		r.SettlementPaidWith, r.SettlementPayerTaxID, r.SettlementPayerName = &paidWith, &st.PayerTaxID, &st.PayerName
	}
	return r, nil
}

func (r *chargeRow) toDomain() (*domain.Charge, error) {
	s := domain.ChargeSnapshot{
		ID:          r.ID,
		AccountID:   r.AccountID,
		Mode:        domain.Mode(r.Mode),
		Amount:      r.Amount,
		Currency:    domain.Currency(r.Currency),
		Status:      domain.TxStatus(r.Status),
		Description: r.Description,
		Customer: domain.Customer{
			Name:     r.CustomerName,
			Document: r.CustomerDocument,
			Email:    r.CustomerEmail,
			Phone:    r.CustomerPhone,
		},
		CustomerRef:     r.CustomerRef,
		ExpectedPayer:   r.ExpectedPayer,
		WebhookURL:      r.WebhookURL,
		Provider:        r.Provider,
		ProviderRef:     r.ProviderRef,
		Fees:            domain.Fees{Provider: r.FeeProvider, Platform: r.FeePlatform},
		RefundedAmount:  r.RefundedAmount,
		RefundCompleted: r.RefundCompleted,
		Details: domain.MethodDetails{
			CardRedirectURL: deref(r.CardRedirectURL),
			MBEntity:        deref(r.MBEntity),
			MBReference:     deref(r.MBReference),
			MBExpiresAt:     r.MBExpiresAt.Time,
			BoletoBarcode:   deref(r.BoletoBarcode),
			BoletoLine:      deref(r.BoletoLine),
			BoletoPDFURL:    deref(r.BoletoPDFURL),
			BoletoExpiresAt: r.BoletoExpiresAt.Time,
			CryptoAddress:   deref(r.CryptoAddress),
			CryptoNetwork:   deref(r.CryptoNetwork),
			CryptoCurrency:  deref(r.CryptoCurrency),
			CryptoAmount:    deref(r.CryptoAmount),
		},
		MethodsPending: r.MethodsPending,
		ReturnState:    domain.ReturnState(r.ReturnState),
		ExpiresAt:      r.ExpiresAt.Time,
		CreatedAt:      r.CreatedAt.Time,
		UpdatedAt:      r.UpdatedAt.Time,
	}
	var err error
	if s.Disputes, err = decodeDisputes(r.Disputes); err != nil {
		return nil, fmt.Errorf("store: decode disputes of charge %s: %w", r.ID, err)
	}
	if s.Splits, err = decodeSplits(r.Splits); err != nil {
		return nil, fmt.Errorf("store: decode splits of charge %s: %w", r.ID, err)
	}
	if s.Due, err = decodeDueTerms(r.DueTerms); err != nil {
		return nil, fmt.Errorf("store: decode due terms of charge %s: %w", r.ID, err)
	}
	if s.Subscription, err = decodeChargeSubscription(r.SubscriptionID, r.SubscriptionCycle, r.SubscriptionDueDate); err != nil {
		return nil, fmt.Errorf("store: decode the subscription of charge %s: %w", r.ID, err)
	}
	s.OverdueNotified = r.OverdueNotified
	if err := json.Unmarshal([]byte(r.Methods), &s.Methods); err != nil {
		return nil, fmt.Errorf("store: decode methods of charge %s: %w", r.ID, err)
	}
	// Metadata numbers decode as json.Number, so they are returned exactly
	// as the merchant sent them: no float rounds a value on the way.
	dec := json.NewDecoder(strings.NewReader(r.Metadata))
	dec.UseNumber()
	if err := dec.Decode(&s.Metadata); err != nil {
		return nil, fmt.Errorf("store: decode metadata of charge %s: %w", r.ID, err)
	}
	if r.PixBRCode != nil {
		s.Pix = &domain.PixDetails{
			BRCode:    *r.PixBRCode,
			TxID:      deref(r.PixTxID),
			Location:  deref(r.PixLocation),
			ExpiresAt: r.PixExpiresAt.Time,
		}
	}
	if r.SettlementAmount != nil {
		s.Settlement = &domain.Settlement{
			EndToEndID: deref(r.SettlementEndToEndID),
			Amount:     *r.SettlementAmount,
			PaidAt:     r.SettlementPaidAt.Time,
			PaidWith:   domain.Method(deref(r.SettlementPaidWith)),
			PayerTaxID: deref(r.SettlementPayerTaxID),
			PayerName:  deref(r.SettlementPayerName),
		}
	}
	return domain.UnmarshalChargeFromStorage(s), nil
}

// optString is s as a nullable column: nil when empty ("" as NULL: the
// method does not apply). The copy is made only then (&s would move every
// s to the heap, empty or not: ten allocations per create).
func optString(s string) *string {
	if s == "" {
		return nil
	}
	p := new(string)
	*p = s
	return p
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

// disputeJSON is one dispute in the charges.disputes column.
type disputeJSON struct {
	ReturnID   string    `json:"return_id"`
	EndToEndID string    `json:"end_to_end_id"`
	Amount     int64     `json:"amount"`
	Reason     string    `json:"reason"`
	At         time.Time `json:"at"`
}

func encodeDisputes(ds []domain.Dispute) (*string, error) {
	if len(ds) == 0 {
		return nil, nil
	}
	rows := make([]disputeJSON, len(ds))
	for i, d := range ds {
		rows[i] = disputeJSON{ReturnID: d.ReturnID, EndToEndID: d.EndToEndID, Amount: d.Amount, Reason: string(d.Reason), At: d.At.UTC()}
	}
	b, err := json.Marshal(rows)
	if err != nil {
		return nil, err
	}
	out := string(b)
	return &out, nil
}

func decodeDisputes(col *string) ([]domain.Dispute, error) {
	if col == nil || *col == "" {
		return nil, nil
	}
	var rows []disputeJSON
	if err := json.Unmarshal([]byte(*col), &rows); err != nil {
		return nil, err
	}
	out := make([]domain.Dispute, len(rows))
	for i, r := range rows {
		out[i] = domain.Dispute{ReturnID: r.ReturnID, EndToEndID: r.EndToEndID, Amount: r.Amount, Reason: domain.DisputeReason(r.Reason), At: r.At}
	}
	return out, nil
}
