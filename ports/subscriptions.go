package ports

import (
	"context"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// SubscriptionQuery filters a subscription list. Results are newest first
// (created_at, then id, descending).
type SubscriptionQuery struct {
	Scope
	// Limit is 1..100.
	Limit int
	// StartingAfter is the raw id of the last subscription of the
	// previous page.
	StartingAfter string
	Statuses      []domain.SubscriptionStatus
}

// SubscriptionChargeQuery pages the charges of one subscription, latest
// cycle first (the first payment, cycle 0, last).
type SubscriptionChargeQuery struct {
	Scope
	SubscriptionID string
	// Limit is 1..100.
	Limit int
	// StartingAfter is the raw id of the last charge of the previous page.
	StartingAfter string
}

// SubscriptionRef names one subscription in its scope.
type SubscriptionRef struct {
	Scope
	ID string
}

// CycleRef names one cycle of a subscription in its scope.
type CycleRef struct {
	Scope
	SubscriptionID string
	Cycle          int
}

// SubscriptionChange is everything one change of a subscription writes in
// the same database transaction as the subscription itself.
type SubscriptionChange struct {
	Events []domain.Event
	// NewCycle, when set, is inserted with Charge, the charge that
	// collects it, and the charge's ChargeEvents. The store keeps one
	// charge per (subscription, cycle) with a unique key: a second one
	// fails the whole change with ErrDuplicate and nothing is written.
	NewCycle     *domain.Cycle
	Charge       *domain.Charge
	ChargeEvents []domain.Event
	// Cycles are saved over the stored cycles of the same number.
	Cycles []*domain.Cycle
}

// SubscriptionTx reads what a change needs inside its transaction, under
// the subscription's row lock.
type SubscriptionTx interface {
	// Cycle reads cycle k of the locked subscription. ErrNotFound when it
	// has none.
	Cycle(ctx context.Context, k int) (*domain.Cycle, error)
	// OpenCycles reads the locked subscription's open cycles (CRIADA,
	// ATIVA), oldest first.
	OpenCycles(ctx context.Context) ([]*domain.Cycle, error)
}

// SubscriptionChangeFunc computes a change of the locked subscription.
type SubscriptionChangeFunc func(ctx context.Context, s *domain.Subscription, tx SubscriptionTx) (SubscriptionChange, error)

// SubscriptionStore keeps subscriptions, their cycles and, with each new
// cycle, the charge that collects it.
type SubscriptionStore interface {
	// CreateSubscription inserts rec (when not nil) first, then s, its
	// events and, for a qr_code_with_first_payment subscription, the
	// first payment's charge with its events, in one transaction; when
	// rec.SettlesIntent it deletes the key's cob intent there.
	// ErrIdempotencyKeyExists when rec's key is used: nothing is written.
	CreateSubscription(ctx context.Context, s *domain.Subscription, events []domain.Event, first *domain.Charge, firstEvents []domain.Event, rec *IdempotencyRecord) error
	// GetSubscription loads a subscription of the scope. ErrNotFound when
	// it does not exist or belongs to another account or mode.
	GetSubscription(ctx context.Context, scope Scope, id string) (*domain.Subscription, error)
	// GetSubscriptionByID loads a subscription by raw id alone (its hosted
	// page). ErrNotFound when it does not exist.
	GetSubscriptionByID(ctx context.Context, id string) (*domain.Subscription, error)
	// UpdateSubscription is the one way to change a stored subscription
	// and its cycles. It locks the subscription's row (FOR UPDATE on
	// Postgres, the write lock on SQLite) until the end of the
	// transaction, calls fn, and when fn returns nil saves the
	// subscription and everything fn's SubscriptionChange names in the
	// same transaction. fn's error rolls back and is returned as is.
	// ErrNotFound when the subscription is not in scope.
	UpdateSubscription(ctx context.Context, scope Scope, id string, fn SubscriptionChangeFunc) error
	// ListSubscriptions returns up to q.Limit subscriptions and whether
	// more follow. ErrNotFound when q.StartingAfter is not one of the
	// scope's.
	ListSubscriptions(ctx context.Context, q SubscriptionQuery) ([]*domain.Subscription, bool, error)
	// GetCycle loads cycle k of a subscription of the scope. ErrNotFound
	// when there is none.
	GetCycle(ctx context.Context, scope Scope, subscriptionID string, k int) (*domain.Cycle, error)
	// ListCycles returns the subscription's cycles, oldest first.
	ListCycles(ctx context.Context, scope Scope, subscriptionID string) ([]*domain.Cycle, error)
	// ListSubscriptionCharges returns up to q.Limit charges of the
	// subscription and whether more follow. ErrNotFound when
	// q.StartingAfter is not one of them.
	ListSubscriptionCharges(ctx context.Context, q SubscriptionChargeQuery) ([]*domain.Charge, bool, error)
	// ClaimDueSubscriptions leases up to limit pending or active
	// subscriptions, in every scope, whose next run is due at now: their
	// next run becomes leaseUntil, so no other worker claims them before
	// then (FOR UPDATE SKIP LOCKED on Postgres) and one a crashed worker
	// held comes back at leaseUntil. The change that handles one sets its
	// next run.
	ClaimDueSubscriptions(ctx context.Context, now, leaseUntil time.Time, limit int) ([]SubscriptionRef, error)
	// FindSubscriptionByRecID names the scope's subscription whose mandate
	// is the rec recID. ErrNotFound when none is.
	FindSubscriptionByRecID(ctx context.Context, scope Scope, recID string) (string, error)
	// FindCycleByTxID names the scope's cycle whose cobr has txid.
	// ErrNotFound when none has.
	FindCycleByTxID(ctx context.Context, scope Scope, txid string) (CycleRef, error)
	// ClaimDueCycles leases up to limit cycles whose check is due at now
	// (open ones, and closed ones whose charge has yet to follow them), in
	// every scope, in the same way (their check_at becomes leaseUntil).
	ClaimDueCycles(ctx context.Context, now, leaseUntil time.Time, limit int) ([]CycleRef, error)
}

// CreateRecurrenceRequest asks the acquirer to open a mandate: the API
// Pix's rec (POST /rec), with its location and QR code for the QR
// journeys (POST /locrec), and for qr_code_with_first_payment linked to
// the first payment's cob (ativacao.dadosJornada.txid) with the composite
// QR code of both.
type CreateRecurrenceRequest struct {
	Scope
	SubscriptionID string
	// Key names this create at the acquirer, derived from the merchant's
	// idempotency key: every retry of the create passes the same one, so
	// an acquirer that can find the rec it opened under it answers that
	// rec instead of opening another.
	Key string
	// DebtorName and DebtorTaxID are vinculo.devedor.
	DebtorName  string
	DebtorTaxID string
	// Contract is vinculo.contrato; Object vinculo.objeto.
	Contract string
	Object   string
	// StartDate and EndDate (zero: none) are calendario.dataInicial and
	// dataFinal; Interval calendario.periodicidade.
	StartDate bizdays.Date
	EndDate   bizdays.Date
	Interval  domain.Interval
	// Amount is valor.valorRec; 0 for a variable subscription.
	Amount      int64
	RetryPolicy domain.RetryPolicy
	Journey     domain.Journey
	// FirstPaymentTxID and FirstPaymentBRCode are the first payment's cob
	// (qr_code_with_first_payment only).
	FirstPaymentTxID   string
	FirstPaymentBRCode string
	MerchantName       string
	MerchantCity       string
	// PayerAccount is where an authorization_request's request will go
	// (AuthorizationRequest.PayerAccount), nil when unknown: an acquirer
	// that needs it refuses the create with ErrPayerAccountRequired
	// before it opens anything.
	PayerAccount *PayerAccount
}

// Recurrence is the acquirer's mandate.
type Recurrence struct {
	// RecID is the API Pix's idRec (29 characters).
	RecID  string
	Status domain.RecStatus
	// BRCode is the QR code the payer scans (dadosQR.pixCopiaECola: for
	// qr_code_with_first_payment the composite code), "" for
	// authorization_request; Location is the rec's location.
	BRCode   string
	Location string
	// CancelledByPayer says, for a CANCELADA rec, that the payer or the
	// payer's PSP cancelled it (encerramento.cancelamento.solicitante).
	CancelledByPayer bool
}

// AuthorizationRequest asks the payer's bank to show the payer a request
// to authorise the rec (POST /solicrec), valid until ExpiresAt. The API
// Pix's destinatario also names the payer's account at that bank (the
// subscription's payer_account): an acquirer that needs it and is given
// none refuses with ErrPayerAccountRequired.
type AuthorizationRequest struct {
	Scope
	RecID       string
	DebtorTaxID string
	ExpiresAt   time.Time
	// PayerAccount is the payer's account at the payer's bank (the API
	// Pix's solicrec.destinatario), nil when unknown.
	PayerAccount *PayerAccount
}

// PayerAccount is a payer's account at the payer's bank.
type PayerAccount = domain.PayerAccount

// ErrPayerAccountRequired: the acquirer sends an authorisation request
// only to an account at the payer's bank, and the request names none. It
// wraps ErrAcquirerRejected.
var ErrPayerAccountRequired = fmt.Errorf("%w: the payer's bank account is required for an authorisation request", ErrAcquirerRejected)

// AuthorizationRequestResult is the acquirer's solicrec.
type AuthorizationRequestResult struct {
	SolicRecID string
	Status     domain.SolicRecStatus
}

// CancelRecurrenceRequest cancels a mandate (PATCH /rec/{idRec}, status
// CANCELADA, by the receiver).
type CancelRecurrenceRequest struct {
	Scope
	RecID string
}

// RecurringChargeRequest creates one cycle's cobr (PUT /cobr/{txid}):
// TxID is derived from the subscription and the cycle
// (domain.CycleTxID), so every attempt names the same cobr.
type RecurringChargeRequest struct {
	Scope
	TxID  string
	RecID string
	// DueDate is calendario.dataDeVencimento; the cobr asks for the
	// debit to move to the next business day (ajusteDiaUtil).
	DueDate bizdays.Date
	Amount  int64
	// Info is infoAdicional, shown to the payer.
	Info string
}

// RecurringAttempt is one debit of a cobr (cobr.tentativas[]).
type RecurringAttempt struct {
	Date       bizdays.Date
	Kind       domain.AttemptKind
	Status     domain.AttemptStatus
	EndToEndID string
	RejectCode string
}

// RecurringCharge is the acquirer's cobr.
type RecurringCharge struct {
	TxID     string
	Status   domain.CobRStatus
	Attempts []RecurringAttempt
	// Pix are the Pix that paid it (cobr.pix[]).
	Pix []ReceivedPix
}

// RetryRecurringChargeRequest asks for a retry of a cobr's failed debit
// on Date (POST /cobr/{txid}/retentativa/{data}).
type RetryRecurringChargeRequest struct {
	Scope
	TxID string
	Date bizdays.Date
}

// CancelRecurringChargeRequest cancels a cobr before its debit (PATCH
// /cobr/{txid}, status CANCELADA).
type CancelRecurringChargeRequest struct {
	Scope
	TxID string
}

// RecurringAcquirer is an acquirer's Pix Automático capability, the API
// Pix's recurrences at the receiver's PSP. Every call's errors are the
// acquirer's: ErrAcquirerUnavailable (retry), ErrAcquirerRejected (the
// request's content), ErrAcquirerUnauthorized, ErrAcquirerNotConfigured.
type RecurringAcquirer interface {
	// CreateRecurrence opens the mandate (see CreateRecurrenceRequest).
	CreateRecurrence(ctx context.Context, req CreateRecurrenceRequest) (*Recurrence, error)
	// RequestAuthorization sends the authorisation request of an
	// authorization_request subscription (POST /solicrec).
	RequestAuthorization(ctx context.Context, req AuthorizationRequest) (*AuthorizationRequestResult, error)
	// GetRecurrence reads a mandate (GET /rec/{idRec}). ErrNotFound when
	// the acquirer does not know it.
	GetRecurrence(ctx context.Context, scope Scope, recID string) (*Recurrence, error)
	// CancelRecurrence cancels a mandate; cancelling one already
	// cancelled, rejected or expired succeeds.
	CancelRecurrence(ctx context.Context, req CancelRecurrenceRequest) error
	// CreateRecurringCharge creates a cycle's cobr, or for a txid it has
	// seen answers the cobr it is.
	CreateRecurringCharge(ctx context.Context, req RecurringChargeRequest) (*RecurringCharge, error)
	// GetRecurringCharge reads a cobr (GET /cobr/{txid}). ErrNotFound
	// when the acquirer does not know it.
	GetRecurringCharge(ctx context.Context, scope Scope, txid string) (*RecurringCharge, error)
	// RetryRecurringCharge asks for a retry of a failed debit; asking
	// again for a retry the acquirer already holds for the same date
	// answers the cobr.
	RetryRecurringCharge(ctx context.Context, req RetryRecurringChargeRequest) (*RecurringCharge, error)
	// CancelRecurringCharge cancels a cobr whose debit has not come;
	// cancelling one already closed succeeds.
	CancelRecurringCharge(ctx context.Context, req CancelRecurringChargeRequest) error
}

// SimulateDebitRequest is the sandbox bank's debit of one cycle's cobr.
type SimulateDebitRequest struct {
	Scope
	TxID       string
	Amount     int64
	PayerTaxID string
	PayerName  string
	// Fail rejects the debit instead of paying it.
	Fail bool
}

// SimulatedDebit is the outcome of a simulated debit: Paid is the Pix that
// paid it, or RejectCode the bank's reason for refusing it.
type SimulatedDebit struct {
	Paid       *domain.PixPayment
	RejectCode string
}

// RecurringSimulator is the sandbox's payer bank for Pix Automático: it
// debits a cycle's cobr as the payer's bank would on the debit's day.
// Test mode only.
type RecurringSimulator interface {
	SimulateRecurringDebit(ctx context.Context, req SimulateDebitRequest) (SimulatedDebit, error)
}
