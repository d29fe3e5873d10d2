package domain

import (
	"errors"
	"slices"
	"strconv"
	"time"

	"github.com/quitapix/quita/domain/bizdays"
)

// Errors of a subscription's cycles.
var (
	// ErrCycleClosed: the cycle's charge is already paid, failed or
	// cancelled.
	ErrCycleClosed = errors.New("the cycle is already closed")
	// ErrNoDebitPending: the cycle has no debit awaiting an outcome.
	ErrNoDebitPending = errors.New("the cycle has no debit pending")
)

// Attempt is one debit of a cycle.
type Attempt struct {
	Date   bizdays.Date
	Kind   AttemptKind
	Status AttemptStatus
	// EndToEndID is the Pix's id once the debit is paid (or the PSP names
	// it earlier).
	EndToEndID string
	// RejectCode is the payer's bank's reason for a rejected debit (the
	// API Pix's rejeicao.codigo), when it gave one.
	RejectCode string
	UpdatedAt  time.Time
}

// CycleSnapshot is the whole state of one cycle of a subscription, for
// storage adapters.
type CycleSnapshot struct {
	SubscriptionID string
	// Cycle is the cycle's number, 1 for the first.
	Cycle     int
	AccountID string
	Mode      Mode
	// ChargeID is the raw id of the Quita charge that collects the cycle.
	ChargeID string
	// TxID is the cobr's txid, derived from the subscription and the
	// cycle (CycleTxID): every attempt to create it names the same one.
	TxID     string
	DueDate  bizdays.Date
	Amount   int64
	Status   CobRStatus
	Policy   RetryPolicy
	Attempts []Attempt
	// CheckAt is when the worker next looks at the open cycle.
	CheckAt   time.Time
	CreatedAt time.Time
	UpdatedAt time.Time
}

// Cycle is one cycle of a subscription: its recurring charge and debits.
// The Quita charge (ChargeID) is where the money is; the cycle is the
// mandate's side of it.
type Cycle struct{ s CycleSnapshot }

// NewCycleParams is the input of NewCycle.
type NewCycleParams struct {
	SubscriptionID string
	Cycle          int
	AccountID      string
	Mode           Mode
	ChargeID       string
	TxID           string
	DueDate        bizdays.Date
	Amount         int64
	Policy         RetryPolicy
	Now            time.Time
}

// NewCycle returns a cycle whose cobr was just created (CRIADA) with its
// first debit requested for FirstDebitDate(due).
func NewCycle(p NewCycleParams) (*Cycle, error) {
	if !ValidRawID(p.SubscriptionID) || p.Cycle < 1 || p.AccountID == "" || !p.Mode.Valid() || !ValidRawID(p.ChargeID) ||
		!ValidTxID(p.TxID) || p.DueDate.IsZero() || !p.Policy.Valid() || p.Now.IsZero() {
		return nil, Invalid(FieldID, "a cycle needs its subscription, number, account, mode, charge, txid, due date, policy and time")
	}
	if p.Amount <= 0 || p.Amount > MaxAmount {
		return nil, Invalid(FieldAmount, "%s must be between 1 and %d", FieldAmount, MaxAmount)
	}
	now := p.Now.UTC()
	return &Cycle{s: CycleSnapshot{
		SubscriptionID: p.SubscriptionID, Cycle: p.Cycle, AccountID: p.AccountID, Mode: p.Mode, ChargeID: p.ChargeID,
		TxID: p.TxID, DueDate: p.DueDate, Amount: p.Amount, Status: CobRCreated, Policy: p.Policy,
		Attempts:  []Attempt{{Date: FirstDebitDate(p.DueDate), Kind: AttemptOnDueDate, Status: AttemptRequested, UpdatedAt: now}},
		CreatedAt: now, UpdatedAt: now,
	}}, nil
}

// UnmarshalCycleFromStorage rebuilds a stored cycle without validation.
// Only storage adapters should call it.
func UnmarshalCycleFromStorage(s CycleSnapshot) *Cycle { return &Cycle{s: s} }

// Snapshot returns a copy of the cycle's state.
func (c *Cycle) Snapshot() CycleSnapshot {
	s := c.s
	s.Attempts = slices.Clone(s.Attempts)
	return s
}

// Number is the cycle's number (1 for the first).
func (c *Cycle) Number() int { return c.s.Cycle }

// SubscriptionID is the raw id of the cycle's subscription.
func (c *Cycle) SubscriptionID() string { return c.s.SubscriptionID }

// ChargeID is the raw id of the cycle's charge.
func (c *Cycle) ChargeID() string { return c.s.ChargeID }

// TxID is the cobr's txid.
func (c *Cycle) TxID() string { return c.s.TxID }

// DueDate is the cycle's due date.
func (c *Cycle) DueDate() bizdays.Date { return c.s.DueDate }

// Amount is what the cycle collects, in centavos.
func (c *Cycle) Amount() int64 { return c.s.Amount }

// Status is the cobr's status.
func (c *Cycle) Status() CobRStatus { return c.s.Status }

// Policy is the retry policy the cycle runs under.
func (c *Cycle) Policy() RetryPolicy { return c.s.Policy }

// Attempts are the cycle's debits, oldest first.
func (c *Cycle) Attempts() []Attempt { return slices.Clone(c.s.Attempts) }

// CheckAt is when the worker next looks at the cycle.
func (c *Cycle) CheckAt() time.Time { return c.s.CheckAt }

// SetCheckAt sets when the worker next looks at the cycle.
func (c *Cycle) SetCheckAt(t time.Time) { c.s.CheckAt = t.UTC() }

// Retries is how many debits were asked for after the first.
func (c *Cycle) Retries() int {
	n := 0
	for _, a := range c.s.Attempts {
		if a.Kind == AttemptRetry {
			n++
		}
	}
	return n
}

// Failures is how many of the cycle's debits were rejected.
func (c *Cycle) Failures() int {
	n := 0
	for _, a := range c.s.Attempts {
		if a.Status == AttemptRejected {
			n++
		}
	}
	return n
}

// PendingDebit is the debit awaiting an outcome, if any: the last one,
// while it is open.
func (c *Cycle) PendingDebit() (Attempt, bool) {
	if n := len(c.s.Attempts); n > 0 && c.s.Attempts[n-1].Status.Open() {
		return c.s.Attempts[n-1], true
	}
	return Attempt{}, false
}

// LastDebitDate is the last day the cycle may be debited.
func (c *Cycle) LastDebitDate() bizdays.Date { return c.s.Policy.LastDebitDate(c.s.DueDate) }

func (c *Cycle) move(to CobRStatus, now time.Time) error {
	if !c.s.Status.Open() {
		return ErrCycleClosed
	}
	if c.s.Status == to {
		return nil
	}
	if !slices.Contains(cobrTransitions[c.s.Status], to) {
		return ErrInvalidTransition
	}
	c.s.Status = to
	c.s.UpdatedAt = now.UTC()
	return nil
}

// settleDebit gives the pending debit its outcome.
func (c *Cycle) settleDebit(to AttemptStatus, e2e, code string, now time.Time) error {
	n := len(c.s.Attempts)
	if n == 0 || !c.s.Attempts[n-1].Status.Open() {
		return ErrNoDebitPending
	}
	a := &c.s.Attempts[n-1]
	if !slices.Contains(attemptTransitions[a.Status], to) {
		return ErrInvalidTransition
	}
	a.Status, a.UpdatedAt = to, now.UTC()
	if e2e != "" {
		a.EndToEndID = e2e
	}
	if code != "" {
		a.RejectCode = code
	}
	return nil
}

// Activate records that the payer's PSP scheduled the pending debit
// (cobr CRIADA → ATIVA, the debit SOLICITADA → AGENDADA).
func (c *Cycle) Activate(now time.Time) error {
	if err := c.move(CobRActive, now); err != nil {
		return err
	}
	if a, ok := c.PendingDebit(); ok && a.Status == AttemptRequested {
		return c.settleDebit(AttemptScheduled, "", "", now)
	}
	return nil
}

// Paid records that the pending debit paid the cycle (CONCLUIDA). A cycle
// whose charge was paid outside a debit the cycle knows (a notification
// without the attempt) is concluded all the same, its open debit marked
// paid.
func (c *Cycle) Paid(endToEndID string, now time.Time) error {
	if err := c.move(CobRConcluded, now); err != nil {
		return err
	}
	if _, ok := c.PendingDebit(); ok {
		return c.settleDebit(AttemptPaid, endToEndID, "", now)
	}
	return nil
}

// DebitFailed records that the payer's bank rejected the pending debit
// (code is its reason, "" when it gave none) and decides what follows
// under the cycle's retry policy: a retry on the next business day, when
// the policy has one left and that day is within its days after the due
// date (retry true, the new debit pending, the cycle still open);
// otherwise the cycle is rejected (REJEITADA). The retries never exceed
// the policy's.
func (c *Cycle) DebitFailed(code string, now time.Time) (retry bool, err error) {
	if !c.s.Status.Open() {
		return false, ErrCycleClosed
	}
	a, ok := c.PendingDebit()
	if !ok {
		return false, ErrNoDebitPending
	}
	if err := c.settleDebit(AttemptRejected, "", code, now); err != nil {
		return false, err
	}
	next, ok := c.s.Policy.NextRetryDate(c.s.DueDate, a.Date, c.Retries())
	if !ok {
		return false, c.move(CobRRejected, now)
	}
	c.s.Attempts = append(c.s.Attempts, Attempt{Date: next, Kind: AttemptRetry, Status: AttemptRequested, UpdatedAt: now.UTC()})
	c.s.UpdatedAt = now.UTC()
	return true, nil
}

// Expire closes a cycle no debit paid by its last day (EXPIRADA); its
// pending debit expires with it.
func (c *Cycle) Expire(now time.Time) error {
	if _, ok := c.PendingDebit(); ok {
		if err := c.settleDebit(AttemptExpired, "", "", now); err != nil {
			return err
		}
	}
	return c.move(CobRExpired, now)
}

// Reject closes a cycle as failed (REJEITADA) whatever its policy, its
// pending debit rejected with code ("" when none is known): the charge
// that collects it was refused.
func (c *Cycle) Reject(code string, now time.Time) error {
	if _, ok := c.PendingDebit(); ok {
		if err := c.settleDebit(AttemptRejected, "", code, now); err != nil {
			return err
		}
	}
	return c.move(CobRRejected, now)
}

// Cancel closes the cycle without a debit (CANCELADA): the subscription
// was cancelled. Its pending debit is cancelled with it.
func (c *Cycle) Cancel(now time.Time) error {
	if _, ok := c.PendingDebit(); ok {
		if err := c.settleDebit(AttemptCancelled, "", "", now); err != nil {
			return err
		}
	}
	return c.move(CobRCancelled, now)
}

// Summary is the cycle as the merchant sees it: its public status, the
// debits made, the day of the one pending and the payer's bank's reason
// for the last rejected one.
func (c *Cycle) Summary() CycleSummary {
	sum := CycleSummary{Cycle: c.Number(), DueDate: c.DueDate(), Amount: c.Amount(), ChargeID: c.ChargeID(),
		Status: c.PublicStatus(), Attempts: len(c.s.Attempts)}
	if a, ok := c.PendingDebit(); ok {
		sum.NextDebit = a.Date
	}
	for _, a := range c.s.Attempts {
		if a.Status == AttemptRejected && a.RejectCode != "" {
			sum.FailureCode = a.RejectCode
		}
	}
	return sum
}

// CycleStatus is a cycle's status as the merchant API shows it.
type CycleStatus string

// Public cycle statuses.
const (
	CycleScheduled CycleStatus = "scheduled"
	CycleRetrying  CycleStatus = "retrying"
	CyclePaid      CycleStatus = "paid"
	CycleFailed    CycleStatus = "failed"
	CycleCancelled CycleStatus = "cancelled"
)

// PublicStatus maps the cobr's status to the merchant's words: an open
// cycle is scheduled, or retrying once a debit failed.
func (c *Cycle) PublicStatus() CycleStatus {
	switch c.s.Status {
	case CobRConcluded:
		return CyclePaid
	case CobRExpired, CobRRejected:
		return CycleFailed
	case CobRCancelled:
		return CycleCancelled
	case CobRCreated, CobRActive:
		if c.Failures() > 0 {
			return CycleRetrying
		}
	}
	return CycleScheduled
}

// CycleTxID is the txid of the cobr of cycle k of subscription subID in
// scope: derived, so that every attempt to create it — a retry after a
// crash, another process racing for the same cycle — names the same cobr,
// which the PSP creates once (PUT /cobr/{txid}).
func CycleTxID(accountID string, mode Mode, subID string, k int) string {
	return DeriveTxID("cobr", accountID, string(mode), subID, strconv.Itoa(k))
}
