package store

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
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
	ExpiresAt            dbTime  `bun:"expires_at"`
	CreatedAt            dbTime  `bun:"created_at"`
	UpdatedAt            dbTime  `bun:"updated_at"`
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
	r := &chargeRow{
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

// optString stores "" as NULL: the method does not apply.
func optString(s string) *string {
	if s == "" {
		return nil
	}
	return &s
}

func deref[T any](p *T) T {
	var zero T
	if p == nil {
		return zero
	}
	return *p
}

type eventRow struct {
	bun.BaseModel `bun:"table:charge_events,alias:e"`

	// Seq is assigned by the database in the order rows are written.
	Seq          int64  `bun:"seq,scanonly"`
	ID           string `bun:"id"`
	AccountID    string `bun:"account_id"`
	Mode         string `bun:"mode"`
	ChargeID     string `bun:"charge_id"`
	Type         string `bun:"type"`
	Payload      []byte `bun:"payload"`
	CreatedAt    dbTime `bun:"created_at"`
	DispatchedAt dbTime `bun:"dispatched_at"`
}

func eventsFromDomain(evs []domain.Event) []eventRow {
	rows := make([]eventRow, len(evs))
	for i, e := range evs {
		rows[i] = eventRow{
			ID:        e.ID,
			AccountID: e.AccountID,
			Mode:      string(e.Mode),
			ChargeID:  e.ChargeID,
			Type:      string(e.Type),
			Payload:   nonNil(e.Payload),
			CreatedAt: newDBTime(e.CreatedAt),
		}
	}
	return rows
}

func (r *eventRow) toDomain() domain.Event {
	return domain.Event{
		ID:        r.ID,
		Type:      domain.EventType(r.Type),
		AccountID: r.AccountID,
		Mode:      domain.Mode(r.Mode),
		ChargeID:  r.ChargeID,
		CreatedAt: r.CreatedAt.Time,
		Payload:   r.Payload,
	}
}

// nonNil keeps an empty body from becoming NULL in a NOT NULL column.
func nonNil(b []byte) []byte {
	if b == nil {
		return []byte{}
	}
	return b
}

type idempotencyRow struct {
	bun.BaseModel `bun:"table:idempotency_records,alias:i"`

	AccountID   string `bun:"account_id,pk"`
	Mode        string `bun:"mode,pk"`
	Key         string `bun:"key,pk"`
	Fingerprint string `bun:"fingerprint"`
	ResourceID  string `bun:"resource_id"`
	StatusCode  int    `bun:"status_code"`
	Body        []byte `bun:"body"`
	CreatedAt   dbTime `bun:"created_at"`
}

func idempotencyFromPort(r *ports.IdempotencyRecord) *idempotencyRow {
	return &idempotencyRow{
		AccountID:   r.AccountID,
		Mode:        string(r.Mode),
		Key:         r.Key,
		Fingerprint: r.Fingerprint,
		ResourceID:  r.ResourceID,
		StatusCode:  r.StatusCode,
		Body:        nonNil(r.Body),
		CreatedAt:   newDBTime(r.CreatedAt),
	}
}

func (r *idempotencyRow) toPort() *ports.IdempotencyRecord {
	return &ports.IdempotencyRecord{
		IdempotencyKey: ports.IdempotencyKey{
			Scope: ports.Scope{AccountID: r.AccountID, Mode: domain.Mode(r.Mode)},
			Key:   r.Key,
		},
		Fingerprint: r.Fingerprint,
		ResourceID:  r.ResourceID,
		StatusCode:  r.StatusCode,
		Body:        r.Body,
		CreatedAt:   r.CreatedAt.Time,
	}
}

type accountRow struct {
	bun.BaseModel `bun:"table:accounts,alias:a"`

	ID                   string `bun:"id,pk"`
	Name                 string `bun:"name"`
	MerchantName         string `bun:"merchant_name"`
	MerchantCity         string `bun:"merchant_city"`
	DefaultExpirySeconds int64  `bun:"default_expiry_seconds"`
	// TransactionWebhookSecret: see migration 20260401000001_webhooks.
	TransactionWebhookSecret string `bun:"transaction_webhook_secret"`
	CreatedAt                dbTime `bun:"created_at"`
}

// accountFromDomain stores DefaultExpiry in whole seconds, the unit of
// expires_in; a fraction of a second is dropped.
func accountFromDomain(a domain.Account) *accountRow {
	return &accountRow{
		ID:                       a.ID,
		Name:                     a.Name,
		MerchantName:             a.MerchantName,
		MerchantCity:             a.MerchantCity,
		DefaultExpirySeconds:     int64(a.DefaultExpiry / time.Second),
		TransactionWebhookSecret: a.TransactionWebhookSecret,
		CreatedAt:                newDBTime(a.CreatedAt),
	}
}

func (r *accountRow) toDomain() *domain.Account {
	return &domain.Account{
		ID:                       r.ID,
		Name:                     r.Name,
		MerchantName:             r.MerchantName,
		MerchantCity:             r.MerchantCity,
		DefaultExpiry:            time.Duration(r.DefaultExpirySeconds) * time.Second,
		TransactionWebhookSecret: r.TransactionWebhookSecret,
		CreatedAt:                r.CreatedAt.Time,
	}
}

type userRow struct {
	bun.BaseModel `bun:"table:users,alias:u"`

	ID           string `bun:"id,pk"`
	AccountID    string `bun:"account_id"`
	Email        string `bun:"email"`
	EmailKey     string `bun:"email_key"`
	PasswordHash string `bun:"password_hash"`
	CreatedAt    dbTime `bun:"created_at"`
}

// emailKey is an e-mail address as logins compare it.
func emailKey(email string) string { return strings.ToLower(strings.TrimSpace(email)) }

func userFromPort(u ports.User) *userRow {
	return &userRow{
		ID:           u.ID,
		AccountID:    u.AccountID,
		Email:        u.Email,
		EmailKey:     emailKey(u.Email),
		PasswordHash: u.PasswordHash,
		CreatedAt:    newDBTime(u.CreatedAt),
	}
}

func (r *userRow) toPort() *ports.User {
	return &ports.User{
		ID:           r.ID,
		AccountID:    r.AccountID,
		Email:        r.Email,
		PasswordHash: r.PasswordHash,
		CreatedAt:    r.CreatedAt.Time,
	}
}

type apiKeyRow struct {
	bun.BaseModel `bun:"table:api_keys,alias:k"`

	ID          string `bun:"id,pk"`
	AccountID   string `bun:"account_id"`
	Mode        string `bun:"mode"`
	Fingerprint string `bun:"fingerprint"`
	Prefix      string `bun:"prefix"`
	Label       string `bun:"label"`
	CreatedAt   dbTime `bun:"created_at"`
	RevokedAt   dbTime `bun:"revoked_at"`

	// Account is filled by LookupAPIKey's join only.
	Account *accountRow `bun:"rel:belongs-to,join:account_id=id"`
}

func apiKeyFromPort(k ports.APIKeyRecord) apiKeyRow {
	r := apiKeyRow{
		ID:          k.ID,
		AccountID:   k.AccountID,
		Mode:        string(k.Mode),
		Fingerprint: k.Fingerprint,
		Prefix:      k.Prefix,
		Label:       k.Label,
		CreatedAt:   newDBTime(k.CreatedAt),
	}
	if k.RevokedAt != nil {
		r.RevokedAt = newDBTime(*k.RevokedAt)
	}
	return r
}

func (r *apiKeyRow) toPort() ports.APIKeyRecord {
	return ports.APIKeyRecord{
		ID:          r.ID,
		AccountID:   r.AccountID,
		Mode:        domain.Mode(r.Mode),
		Fingerprint: r.Fingerprint,
		Prefix:      r.Prefix,
		Label:       r.Label,
		CreatedAt:   r.CreatedAt.Time,
		RevokedAt:   r.RevokedAt.ptr(),
	}
}
