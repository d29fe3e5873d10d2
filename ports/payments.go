package ports

//go:generate go tool moq -rm -out ../mocks/payments.go -pkg mocks . PaymentStore MethodAcquirer RefundAcquirer AccountFeeStore

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
)

// PaymentQuery is a page of the payments list.
type PaymentQuery struct {
	Scope
	Page, Limit   int
	Status        domain.TxStatus
	CreatedAfter  *time.Time
	CreatedBefore *time.Time
	// SortBy is a field of the transaction read format; the store rejects
	// fields it cannot sort by with a *domain.ValidationError.
	SortBy string
	Desc   bool
}

// PaymentAggregate is one group of payments for stats and metrics.
type PaymentAggregate struct {
	Day      string // YYYY-MM-DD (UTC) of creation
	Currency domain.Currency
	Status   domain.TxStatus
	PaidWith domain.Method
	Count    int64
	Volume   int64
	Refunded int64
}

// RefundQuery pages through a scope's refunds, newest first.
type RefundQuery struct {
	Scope
	// Limit is 1..100; Offset ≥ 0.
	Limit  int
	Offset int
}

// OpenRefund is a claimed refund with what driving it needs: how its
// charge was paid.
type OpenRefund struct {
	domain.Refund
	PaidWith domain.Method
	// PayerTaxID is the paying account's document as the acquirer reported
	// it (empty when unknown): where a cashout without a destination key
	// goes, as a CPF/CNPJ Pix key.
	PayerTaxID string
}

// Scope is the refund's account and mode.
func (r OpenRefund) Scope() Scope { return Scope{AccountID: r.AccountID, Mode: r.Mode} }

// Hold is money pending release in a wallet.
type Hold struct {
	ID        int64
	Scope     Scope
	Currency  domain.Currency
	ChargeID  string
	Amount    int64
	ReleaseAt time.Time
}

// Wallet is a balance with its next release.
type Wallet struct {
	domain.Balance
	NextReleaseAt     *time.Time
	NextReleaseAmount int64
}

// LedgerTotals is what `quitad ledger verify` compares.
type LedgerTotals struct {
	Posted     map[domain.WalletKey]domain.Balance
	Stored     map[domain.WalletKey]domain.Balance
	Held       map[domain.WalletKey]int64
	Unbalanced []string
}

// LedgerCheckOptions asks for a ledger verify.
type LedgerCheckOptions struct {
	// Full reads every posting, charge, refund and payout, and starts
	// the checkpoint again from what it read.
	Full bool
	// EventsKept is how long events are kept (their retention): an
	// incremental run finds the charges changed since its checkpoint by
	// their events, so a checkpoint older than that (less an hour) makes
	// the run a full one. Zero: no limit.
	EventsKept time.Duration
}

// LedgerCheck is what a ledger verify found and how much it read.
type LedgerCheck struct {
	// Problems are the differences found, sorted, each naming its
	// account; none when the ledger and what derives from it agree.
	Problems []string
	// Full: the run read everything, because it was asked to or, Reason
	// says, because it could not go on from the checkpoint.
	Full   bool
	Reason string
	// Since is when the checkpoint an incremental run went on from was
	// taken.
	Since time.Time
	// Postings is how many postings the run summed (all of them, or
	// those written since the checkpoint); Entries, Events, Charges and
	// Payouts, of an incremental run, the entries and events written
	// since the checkpoint and the charges and payouts checked again.
	Postings, Entries, Events, Charges, Payouts int64
	// Saved: the checkpoint now stands where this run read up to. A full
	// run saves it always, an incremental one only when it found nothing
	// (so the next run reports a problem again); neither does when
	// another run moved it meanwhile or when transactions open at the
	// start stayed open past the wait.
	Saved bool
}

// PaymentStore is the payments surface's storage: lists and aggregates of
// charges, refunds, wallets and the ledger.
type PaymentStore interface {
	// ListPayments returns a page and the total matching.
	ListPayments(ctx context.Context, q PaymentQuery) ([]*domain.Charge, int, error)
	// AggregatePayments groups the scope's charges created at or after
	// since (optionally of one currency) by day, currency, status, method.
	AggregatePayments(ctx context.Context, scope Scope, since time.Time, currency domain.Currency) ([]PaymentAggregate, error)
	// MedianSecondsToPay is the median of paid_at − created_at of the
	// charges created since and settled, rounded; nil when none settled.
	MedianSecondsToPay(ctx context.Context, scope Scope, since time.Time, currency domain.Currency) (*int64, error)
	// ListRefunds returns a charge's refunds, newest first.
	ListRefunds(ctx context.Context, scope Scope, chargeID string) ([]domain.Refund, error)
	// ListScopeRefunds returns up to q.Limit refunds of the scope, newest
	// first, from q.Offset, and whether more follow.
	ListScopeRefunds(ctx context.Context, q RefundQuery) ([]domain.Refund, bool, error)
	// FindRefund finds a refund of the scope by raw id.
	FindRefund(ctx context.Context, scope Scope, id string) (*domain.Refund, error)
	// ListMethodsPending returns charges created at or before before whose
	// method data is still pending, oldest first, in every scope.
	ListMethodsPending(ctx context.Context, before time.Time, limit int) ([]ChargeRef, error)
	// ClaimOpenRefunds leases up to limit refunds in PENDING or
	// IN_PROGRESS whose lease has ended (or never began), longest waiting
	// first, in every scope, until leaseUntil. On Postgres the rows are
	// picked with FOR UPDATE SKIP LOCKED, so concurrent workers in any
	// number of processes claim different refunds.
	ClaimOpenRefunds(ctx context.Context, now, leaseUntil time.Time, limit int) ([]OpenRefund, error)
	// UpdateCharges is ChargeStore.UpdateCharge for several charges in one
	// transaction (one commit for many refund steps or creates): it locks
	// them all (in id order), calls fn on each, and writes every change fn
	// returned. An error of fn for one charge leaves that charge out and
	// is reported at its index (ErrNotFound when it is not in its scope);
	// the others are written. An error writing the batch rolls back all of
	// it and is the second result (then none was written). A charge may be
	// named once.
	UpdateCharges(ctx context.Context, refs []ChargeRef, fn ChargeChangeFunc) ([]error, error)
	// RefundCharge is ChargeStore.UpdateCharge for the change that creates
	// a refund. The adapter may write it in one transaction with the
	// RefundCharge calls of other charges made at the same moment (one
	// commit and one wallet update for all: every refund of an account
	// debits the same wallet row). The outcome is the one UpdateCharge
	// alone would give: fn's error exactly as fn returned it, ErrNotFound,
	// ErrIdempotencyKeyExists, domain.ErrInsufficientBalance when the
	// wallet check refused the debit, ErrStoreUnavailable. fn may run more
	// than once (in a batch that failed as a whole, then alone); only the
	// change of the run that commits is written.
	RefundCharge(ctx context.Context, ref ChargeRef, fn ChargeChangeFunc) error
	// Wallets returns the scope's wallets by currency.
	Wallets(ctx context.Context, scope Scope) ([]Wallet, error)
	// ListDueHolds returns holds whose release is at or before now.
	ListDueHolds(ctx context.Context, now time.Time, limit int) ([]Hold, error)
	// ReleaseHold deletes the hold and writes entry (pending → available)
	// in one transaction; false when another process released it first.
	ReleaseHold(ctx context.Context, h Hold, entry domain.JournalEntry) (bool, error)
	// LedgerTotals sums every posting and balance, for verification, in
	// one consistent snapshot that does not block writers.
	LedgerTotals(ctx context.Context) (LedgerTotals, error)
	// CheckLedger verifies, in one snapshot that does not block writers,
	// every wallet against its postings and open holds and, from the
	// charges, refunds and payouts, what the write path keeps
	// incrementally: all of it (opts.Full, or no usable checkpoint), or
	// what was written since the checkpoint of the last run.
	CheckLedger(ctx context.Context, opts LedgerCheckOptions) (LedgerCheck, error)
	// VerifyDerived recomputes what the write path keeps incrementally —
	// charge counters, per-day totals, each refund's ledger entries — from
	// the charges and refunds in one snapshot, and returns each difference
	// naming its account and mode (none when they agree).
	VerifyDerived(ctx context.Context) ([]string, error)
}

// CreateMethodsRequest asks an acquirer for the payment data of the
// non-Pix methods of a charge.
type CreateMethodsRequest struct {
	Scope
	ChargeID     string
	Methods      []domain.Method
	Amount       int64
	Currency     domain.Currency
	ExpiresAt    time.Time
	CustomerName string
	ReturnURL    string
	Phone        string
}

// MethodAcquirer is an acquirer capability: methods other than Pix.
type MethodAcquirer interface {
	// CreatePaymentMethods returns the methods' data. Idempotent by
	// ChargeID. Errors: ErrAcquirerUnavailable, ErrAcquirerRejected.
	CreatePaymentMethods(ctx context.Context, req CreateMethodsRequest) (domain.MethodDetails, error)
}

// RefundRequest sends a refund to the payer.
type RefundRequest struct {
	Scope
	ChargeID       string
	RefundID       string
	Method         domain.Method
	Strategy       domain.RefundStrategy
	EndToEndID     string
	Amount         int64
	DestinationKey string
	// PayerTaxID is the payer's document, the key of a cashout without
	// DestinationKey (empty when unknown).
	PayerTaxID string
}

// ProviderStatus is the acquirer's live view of a charge.
type ProviderStatus struct {
	Status      string
	RawResponse map[string]any
}

// RefundAcquirer is an acquirer capability: refunds and live status.
// (Receipts are Quita's own, drawn from its records: ReceiptRenderer.)
type RefundAcquirer interface {
	// Refund starts a refund; idempotent by RefundID. It returns the
	// provider's reference.
	Refund(ctx context.Context, req RefundRequest) (string, error)
	// RefundStatus reports "IN_PROGRESS", "REFUNDED" or "FAILED".
	RefundStatus(ctx context.Context, providerRef string) (string, error)
	// ChargeStatus reads a charge at the provider, bypassing any cache.
	ChargeStatus(ctx context.Context, providerRef string) (ProviderStatus, error)
}

// AccountFeeStore keeps per-account fee overrides by payment method.
type AccountFeeStore interface {
	// AccountFees returns the account's overrides (empty when none).
	AccountFees(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error)
	// PutAccountFee sets the account's schedule for one method.
	PutAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule, at time.Time) error
}
