package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/brcode"
	"github.com/quitapix/quita/ports"
)

// The sandbox's Pix Automático plays the receiver's PSP that always
// answers, and, through the test helpers, the payer's bank: a mandate is
// authorised, rejected or revoked only when a helper says so, and a
// cycle's debit happens only when the advance helper runs it. Like its
// cobs, it keeps nothing: every answer derives from the request, so any
// quitad process answers alike.

var (
	_ ports.RecurringAcquirer  = (*Acquirer)(nil)
	_ ports.RecurringSimulator = (*Acquirer)(nil)
)

// recID is the API Pix's idRec for a mandate opened under key on the day
// of now: "R", then "R" (retries allowed) or "N", the sandbox's ISPB, the
// date yyyyMMdd and 11 characters derived from key — 29 in all, the same
// for every retry of the create on that day.
func (a *Acquirer) recID(key string, retries bool) string {
	kind := "N"
	if retries {
		kind = "R"
	}
	return "R" + kind + ISPB + a.today() + domain.DeriveTxID("rec", key)[:11]
}

// today is the date of now in Brasília as yyyyMMdd, the API Pix ids' form.
func (a *Acquirer) today() string {
	return strings.ReplaceAll(domain.BrasiliaDate(a.now()).String(), "-", "")
}

// CreateRecurrence implements ports.RecurringAcquirer: the rec, with a
// location and QR code for the QR journeys (the composite code with the
// first payment's cob for qr_code_with_first_payment).
func (a *Acquirer) CreateRecurrence(ctx context.Context, req ports.CreateRecurrenceRequest) (*ports.Recurrence, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if req.Key == "" || req.DebtorTaxID == "" || req.Contract == "" || !req.Interval.Valid() || !req.Journey.Valid() {
		return nil, fmt.Errorf("%w: a rec needs a key, a debtor, a contract, an interval and a journey", ports.ErrAcquirerRejected)
	}
	rec := &ports.Recurrence{RecID: a.recID(req.Key, req.RetryPolicy.MaxRetries() > 0), Status: domain.RecCreated}
	if !req.Journey.QR() {
		return rec, nil
	}
	rec.Location = a.cfg.LocationHost + "/rec/" + domain.DeriveTxID("locrec", rec.RecID)
	var err error
	switch req.Journey {
	case domain.JourneyQRCode:
		rec.BRCode, err = brcode.NewRecurrence(rec.Location, req.MerchantName, req.MerchantCity)
	case domain.JourneyQRCodeWithFirstPayment:
		if req.FirstPaymentTxID == "" || req.FirstPaymentBRCode == "" {
			return nil, fmt.Errorf("%w: JORNADA_3 needs the first payment's cob", ports.ErrAcquirerRejected)
		}
		rec.BRCode, err = brcode.WithRecurrence(req.FirstPaymentBRCode, rec.Location)
	case domain.JourneyAuthorizationRequest:
	}
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
	}
	return rec, nil
}

// RequestAuthorization implements ports.RecurringAcquirer: the sandbox
// sends the request to the payer's bank at once (ENVIADA); the payer
// answers through the test helpers.
func (a *Acquirer) RequestAuthorization(ctx context.Context, req ports.AuthorizationRequest) (*ports.AuthorizationRequestResult, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if len(req.RecID) != 29 || req.DebtorTaxID == "" || req.ExpiresAt.IsZero() {
		return nil, fmt.Errorf("%w: a solicrec needs the rec, the payer and an expiry", ports.ErrAcquirerRejected)
	}
	id := "SC" + ISPB + a.today() + domain.DeriveTxID("solicrec", req.RecID)[:11]
	return &ports.AuthorizationRequestResult{SolicRecID: id, Status: domain.SolicRecSent}, nil
}

// GetRecurrence implements ports.RecurringAcquirer. The sandbox keeps no
// mandates (their outcomes come from the test helpers): ErrNotFound.
func (a *Acquirer) GetRecurrence(ctx context.Context, _ ports.Scope, recID string) (*ports.Recurrence, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: the sandbox keeps no rec %s", ports.ErrNotFound, recID)
}

// CancelRecurrence implements ports.RecurringAcquirer.
func (a *Acquirer) CancelRecurrence(ctx context.Context, req ports.CancelRecurrenceRequest) error {
	if err := a.call(ctx); err != nil {
		return err
	}
	if req.RecID == "" {
		return fmt.Errorf("%w: no rec to cancel", ports.ErrAcquirerRejected)
	}
	return nil
}

// CreateRecurringCharge implements ports.RecurringAcquirer: the cobr is
// accepted and its debit scheduled for its due date (moved to the next
// business day). The answer depends only on the request, so a retry with
// the same txid gets the same cobr.
func (a *Acquirer) CreateRecurringCharge(ctx context.Context, req ports.RecurringChargeRequest) (*ports.RecurringCharge, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if !domain.ValidTxID(req.TxID) || req.RecID == "" || req.Amount <= 0 || req.DueDate.IsZero() {
		return nil, fmt.Errorf("%w: a cobr needs a txid, a rec, an amount and a due date", ports.ErrAcquirerRejected)
	}
	return &ports.RecurringCharge{TxID: req.TxID, Status: domain.CobRActive, Attempts: []ports.RecurringAttempt{{
		Date: domain.FirstDebitDate(req.DueDate), Kind: domain.AttemptOnDueDate, Status: domain.AttemptScheduled}}}, nil
}

// GetRecurringCharge implements ports.RecurringAcquirer. The sandbox keeps
// no cobrs (their debits happen through the advance helper): ErrNotFound.
func (a *Acquirer) GetRecurringCharge(ctx context.Context, _ ports.Scope, txid string) (*ports.RecurringCharge, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	return nil, fmt.Errorf("%w: the sandbox keeps no cobr %s", ports.ErrNotFound, txid)
}

// RetryRecurringCharge implements ports.RecurringAcquirer: the retry is
// scheduled for its day.
func (a *Acquirer) RetryRecurringCharge(ctx context.Context, req ports.RetryRecurringChargeRequest) (*ports.RecurringCharge, error) {
	if err := a.call(ctx); err != nil {
		return nil, err
	}
	if !domain.ValidTxID(req.TxID) || req.Date.IsZero() {
		return nil, fmt.Errorf("%w: a retry needs a txid and a date", ports.ErrAcquirerRejected)
	}
	return &ports.RecurringCharge{TxID: req.TxID, Status: domain.CobRActive, Attempts: []ports.RecurringAttempt{{
		Date: req.Date, Kind: domain.AttemptRetry, Status: domain.AttemptScheduled}}}, nil
}

// CancelRecurringCharge implements ports.RecurringAcquirer.
func (a *Acquirer) CancelRecurringCharge(ctx context.Context, req ports.CancelRecurringChargeRequest) error {
	if err := a.call(ctx); err != nil {
		return err
	}
	if !domain.ValidTxID(req.TxID) {
		return fmt.Errorf("%w: txid %q", ports.ErrAcquirerRejected, req.TxID)
	}
	return nil
}

// SandboxRejectCode is the reason the sandbox's payer bank gives for a
// debit it refuses: AM02, an amount over what the payer's account
// allows (the API Pix's rejection codes), which a retry may overcome.
const SandboxRejectCode = "AM02"

// SimulateRecurringDebit implements ports.RecurringSimulator: the payer's
// bank debits the cobr now, paying it with a Pix, or rejects the debit
// when req.Fail with SandboxRejectCode, a reason that allows a retry.
func (a *Acquirer) SimulateRecurringDebit(_ context.Context, req ports.SimulateDebitRequest) (ports.SimulatedDebit, error) {
	if a.down.Load() {
		return ports.SimulatedDebit{}, ports.ErrAcquirerUnavailable
	}
	if !domain.ValidTxID(req.TxID) || req.Amount <= 0 {
		return ports.SimulatedDebit{}, fmt.Errorf("%w: a debit needs a txid and an amount", ports.ErrAcquirerRejected)
	}
	if req.Fail {
		return ports.SimulatedDebit{RejectCode: SandboxRejectCode}, nil
	}
	p, err := a.SimulatePixPayment(context.Background(), ports.SimulatePaymentRequest{TxID: req.TxID, Amount: req.Amount,
		PayerTaxID: req.PayerTaxID, PayerName: strings.TrimSpace(req.PayerName)})
	if err != nil {
		return ports.SimulatedDebit{}, err
	}
	return ports.SimulatedDebit{Paid: &p}, nil
}
