package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
)

// subscriptionRow is a row of the subscriptions table.
type subscriptionRow struct {
	bun.BaseModel `bun:"table:subscriptions,alias:sb"`

	ID                     string  `bun:"id,pk"`
	AccountID              string  `bun:"account_id"`
	Mode                   string  `bun:"mode"`
	Status                 string  `bun:"status"`
	CancelledBy            string  `bun:"cancelled_by"`
	CustomerName           string  `bun:"customer_name"`
	CustomerDocument       string  `bun:"customer_document"`
	Amount                 int64   `bun:"amount"`
	Variable               bool    `bun:"variable"`
	MaxAmount              int64   `bun:"max_amount"`
	Interval               string  `bun:"cycle_interval"`
	StartDate              string  `bun:"start_date"`
	EndDate                string  `bun:"end_date"`
	Contract               string  `bun:"contract"`
	Description            string  `bun:"description"`
	RetryPolicy            string  `bun:"retry_policy"`
	Journey                string  `bun:"journey"`
	FirstPayment           int64   `bun:"first_payment"`
	FirstChargeID          string  `bun:"first_charge_id"`
	PayerISPB              string  `bun:"payer_ispb"`
	PayerBranch            string  `bun:"payer_branch"`
	PayerAccountNumber     string  `bun:"payer_account_number"`
	RecID                  string  `bun:"rec_id"`
	RecStatus              string  `bun:"rec_status"`
	SolicRecID             string  `bun:"solicrec_id"`
	SolicRecStatus         string  `bun:"solicrec_status"`
	BRCode                 string  `bun:"br_code"`
	Location               string  `bun:"location"`
	AuthorizationExpiresAt dbTime  `bun:"authorization_expires_at"`
	NextCycle              int64   `bun:"next_cycle"`
	NextAmount             int64   `bun:"next_amount"`
	CyclesOpen             int64   `bun:"cycles_open"`
	CyclesPaid             int64   `bun:"cycles_paid"`
	CyclesFailed           int64   `bun:"cycles_failed"`
	CyclesSkipped          int64   `bun:"cycles_skipped"`
	LatestCycle            *string `bun:"latest_cycle"` // JSON, NULL before the first cycle
	NextRunAt              dbTime  `bun:"next_run_at"`
	CreatedAt              dbTime  `bun:"created_at"`
	UpdatedAt              dbTime  `bun:"updated_at"`
	AuthorizedAt           dbTime  `bun:"authorized_at"`
	CancelledAt            dbTime  `bun:"cancelled_at"`
	EndedAt                dbTime  `bun:"ended_at"`
}

// subscriptionImmutableColumns are never rewritten by UpdateSubscription.
var subscriptionImmutableColumns = []string{"id", "account_id", "mode", "created_at"}

// cycleSummaryJSON is the subscriptions.latest_cycle column.
type cycleSummaryJSON struct {
	Cycle       int          `json:"cycle"`
	DueDate     bizdays.Date `json:"due_date"`
	Amount      int64        `json:"amount"`
	ChargeID    string       `json:"charge_id"`
	Status      string       `json:"status"`
	Attempts    int          `json:"attempts"`
	NextDebit   string       `json:"next_debit,omitempty"`
	FailureCode string       `json:"failure_code,omitempty"`
}

func subscriptionFromDomain(sub *domain.Subscription) (*subscriptionRow, error) {
	s := sub.Snapshot()
	r := &subscriptionRow{
		ID: s.ID, AccountID: s.AccountID, Mode: string(s.Mode), Status: string(s.Status), CancelledBy: string(s.CancelledBy),
		CustomerName: s.Payer.Name, CustomerDocument: s.Payer.Document, Amount: s.Amount, Variable: s.Variable,
		MaxAmount: s.MaxAmount, Interval: string(s.Interval), StartDate: dateText(s.StartDate), EndDate: dateText(s.EndDate),
		Contract: s.Contract, Description: s.Description, RetryPolicy: string(s.RetryPolicy), Journey: string(s.Journey),
		FirstPayment: s.FirstPayment, FirstChargeID: s.FirstChargeID, RecID: s.Mandate.RecID,
		RecStatus: string(s.Mandate.RecStatus), SolicRecID: s.Mandate.SolicRecID, SolicRecStatus: string(s.Mandate.SolicRecStatus),
		BRCode: s.Mandate.BRCode, Location: s.Mandate.Location, AuthorizationExpiresAt: newDBTime(s.AuthorizationExpiresAt),
		NextCycle: int64(s.NextCycle), NextAmount: s.NextAmount, CyclesOpen: int64(s.Cycles.Open), CyclesPaid: int64(s.Cycles.Paid),
		CyclesFailed: int64(s.Cycles.Failed), CyclesSkipped: int64(s.Cycles.Skipped), NextRunAt: newDBTime(s.NextRunAt),
		CreatedAt: newDBTime(s.CreatedAt), UpdatedAt: newDBTime(s.UpdatedAt), AuthorizedAt: newDBTime(s.AuthorizedAt),
		CancelledAt: newDBTime(s.CancelledAt), EndedAt: newDBTime(s.EndedAt),
	}
	if a := s.PayerAccount; a != nil {
		r.PayerISPB, r.PayerBranch, r.PayerAccountNumber = a.ISPB, a.Branch, a.Number
	}
	if l := s.Latest; l != nil {
		b, err := json.Marshal(cycleSummaryJSON{Cycle: l.Cycle, DueDate: l.DueDate, Amount: l.Amount, ChargeID: l.ChargeID,
			Status: string(l.Status), Attempts: l.Attempts, NextDebit: dateText(l.NextDebit), FailureCode: l.FailureCode})
		if err != nil {
			return nil, fmt.Errorf("store: encode the latest cycle of subscription %s: %w", s.ID, err)
		}
		r.LatestCycle = optString(string(b))
	}
	return r, nil
}

func (r *subscriptionRow) toDomain() (*domain.Subscription, error) {
	s := domain.SubscriptionSnapshot{
		ID: r.ID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode), Status: domain.SubscriptionStatus(r.Status),
		CancelledBy: domain.CancelledBy(r.CancelledBy), Payer: domain.Payer{Name: r.CustomerName, Document: r.CustomerDocument},
		Amount: r.Amount, Variable: r.Variable, MaxAmount: r.MaxAmount, Interval: domain.Interval(r.Interval),
		Contract: r.Contract, Description: r.Description, RetryPolicy: domain.RetryPolicy(r.RetryPolicy),
		Journey: domain.Journey(r.Journey), FirstPayment: r.FirstPayment, FirstChargeID: r.FirstChargeID,
		Mandate: domain.Mandate{RecID: r.RecID, RecStatus: domain.RecStatus(r.RecStatus), SolicRecID: r.SolicRecID,
			SolicRecStatus: domain.SolicRecStatus(r.SolicRecStatus), BRCode: r.BRCode, Location: r.Location},
		AuthorizationExpiresAt: r.AuthorizationExpiresAt.Time, NextCycle: int(r.NextCycle), NextAmount: r.NextAmount,
		Cycles: domain.CycleCounts{Open: int(r.CyclesOpen), Paid: int(r.CyclesPaid), Failed: int(r.CyclesFailed),
			Skipped: int(r.CyclesSkipped)},
		NextRunAt: r.NextRunAt.Time, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
		AuthorizedAt: r.AuthorizedAt.Time, CancelledAt: r.CancelledAt.Time, EndedAt: r.EndedAt.Time,
	}
	if r.PayerAccountNumber != "" {
		s.PayerAccount = &domain.PayerAccount{ISPB: r.PayerISPB, Branch: r.PayerBranch, Number: r.PayerAccountNumber}
	}
	var err error
	if s.StartDate, err = parseDateText(r.StartDate); err != nil {
		return nil, fmt.Errorf("store: subscription %s start_date: %w", r.ID, err)
	}
	if s.EndDate, err = parseDateText(r.EndDate); err != nil {
		return nil, fmt.Errorf("store: subscription %s end_date: %w", r.ID, err)
	}
	if r.LatestCycle != nil {
		var j cycleSummaryJSON
		if err := json.Unmarshal([]byte(*r.LatestCycle), &j); err != nil {
			return nil, fmt.Errorf("store: subscription %s latest cycle: %w", r.ID, err)
		}
		l := &domain.CycleSummary{Cycle: j.Cycle, DueDate: j.DueDate, Amount: j.Amount, ChargeID: j.ChargeID,
			Status: domain.CycleStatus(j.Status), Attempts: j.Attempts, FailureCode: j.FailureCode}
		if l.NextDebit, err = parseDateText(j.NextDebit); err != nil {
			return nil, fmt.Errorf("store: subscription %s latest cycle: %w", r.ID, err)
		}
		s.Latest = l
	}
	return domain.UnmarshalSubscriptionFromStorage(s), nil
}

// cycleRow is a row of the subscription_cycles table.
type cycleRow struct {
	bun.BaseModel `bun:"table:subscription_cycles,alias:sc"`

	SubscriptionID string `bun:"subscription_id,pk"`
	Cycle          int64  `bun:"cycle,pk"`
	AccountID      string `bun:"account_id"`
	Mode           string `bun:"mode"`
	ChargeID       string `bun:"charge_id"`
	TxID           string `bun:"txid"`
	DueDate        string `bun:"due_date"`
	Amount         int64  `bun:"amount"`
	Status         string `bun:"status"`
	RetryPolicy    string `bun:"retry_policy"`
	Attempts       string `bun:"attempts"` // JSON
	CheckAt        dbTime `bun:"check_at"`
	CreatedAt      dbTime `bun:"created_at"`
	UpdatedAt      dbTime `bun:"updated_at"`
}

// attemptJSON is one debit in subscription_cycles.attempts.
type attemptJSON struct {
	Date       bizdays.Date `json:"date"`
	Kind       string       `json:"kind"`
	Status     string       `json:"status"`
	EndToEndID string       `json:"end_to_end_id,omitempty"`
	RejectCode string       `json:"reject_code,omitempty"`
	UpdatedAt  time.Time    `json:"updated_at"`
}

func cycleFromDomain(c *domain.Cycle) (*cycleRow, error) {
	s := c.Snapshot()
	atts := make([]attemptJSON, len(s.Attempts))
	for i, a := range s.Attempts {
		atts[i] = attemptJSON{Date: a.Date, Kind: string(a.Kind), Status: string(a.Status), EndToEndID: a.EndToEndID,
			RejectCode: a.RejectCode, UpdatedAt: a.UpdatedAt.UTC()}
	}
	b, err := json.Marshal(atts)
	if err != nil {
		return nil, fmt.Errorf("store: encode the attempts of cycle %d of %s: %w", s.Cycle, s.SubscriptionID, err)
	}
	return &cycleRow{SubscriptionID: s.SubscriptionID, Cycle: int64(s.Cycle), AccountID: s.AccountID, Mode: string(s.Mode),
		ChargeID: s.ChargeID, TxID: s.TxID, DueDate: dateText(s.DueDate), Amount: s.Amount, Status: string(s.Status),
		RetryPolicy: string(s.Policy), Attempts: string(b), CheckAt: newDBTime(s.CheckAt), CreatedAt: newDBTime(s.CreatedAt),
		UpdatedAt: newDBTime(s.UpdatedAt)}, nil
}

func (r *cycleRow) toDomain() (*domain.Cycle, error) {
	due, err := parseDateText(r.DueDate)
	if err != nil {
		return nil, fmt.Errorf("store: cycle %d of %s: %w", r.Cycle, r.SubscriptionID, err)
	}
	var atts []attemptJSON
	if err := json.Unmarshal([]byte(r.Attempts), &atts); err != nil {
		return nil, fmt.Errorf("store: cycle %d of %s attempts: %w", r.Cycle, r.SubscriptionID, err)
	}
	s := domain.CycleSnapshot{SubscriptionID: r.SubscriptionID, Cycle: int(r.Cycle), AccountID: r.AccountID, Mode: domain.Mode(r.Mode),
		ChargeID: r.ChargeID, TxID: r.TxID, DueDate: due, Amount: r.Amount, Status: domain.CobRStatus(r.Status),
		Policy: domain.RetryPolicy(r.RetryPolicy), CheckAt: r.CheckAt.Time, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time}
	for _, a := range atts {
		s.Attempts = append(s.Attempts, domain.Attempt{Date: a.Date, Kind: domain.AttemptKind(a.Kind), Status: domain.AttemptStatus(a.Status),
			EndToEndID: a.EndToEndID, RejectCode: a.RejectCode, UpdatedAt: a.UpdatedAt})
	}
	return domain.UnmarshalCycleFromStorage(s), nil
}
