package domain

import (
	"encoding/json"
	"fmt"
	"strings"
	"time"
)

// SubscriptionPageURL is the hosted page of a QR-journey subscription,
// where the payer scans its QR code: the checkout base, "sub" and the
// raw id.
func (l Links) SubscriptionPageURL(rawID string) string {
	return strings.TrimRight(l.CheckoutBase, "/") + "/sub/" + rawID
}

// SubscriptionQRCodeURL is the PNG of a QR-journey subscription's code.
func (l Links) SubscriptionQRCodeURL(rawID string) string {
	return l.SubscriptionPageURL(rawID) + "/qr.png"
}

// PublicSubscription is the subscription as the /v1/subscriptions surface
// and the subscription.* webhooks show it. Absent values are null.
type PublicSubscription struct {
	ID          string                   `json:"id"`
	Object      string                   `json:"object"`
	Status      SubscriptionStatus       `json:"status"`
	CancelledBy *CancelledBy             `json:"cancelled_by"`
	Customer    PublicCustomer           `json:"customer"`
	Amount      *int64                   `json:"amount"`
	Variable    *PublicVariableAmount    `json:"variable"`
	Currency    Currency                 `json:"currency"`
	Interval    Interval                 `json:"interval"`
	StartDate   string                   `json:"start_date"`
	EndDate     *string                  `json:"end_date"`
	Contract    string                   `json:"contract"`
	Description *string                  `json:"description"`
	RetryPolicy RetryPolicy              `json:"retry_policy"`
	Journey     Journey                  `json:"journey"`
	FirstPay    *PublicFirstPayment      `json:"first_payment"`
	PayerAcct   *PublicPayerAccount      `json:"payer_account"`
	Pix         *PublicSubscriptionPix   `json:"pix"`
	HostedURL   *string                  `json:"hosted_url"`
	AuthExpires Timestamp                `json:"authorization_expires_at"`
	NextCycle   *PublicNextCycle         `json:"next_cycle"`
	LatestCycle *PublicCycleSummary      `json:"latest_cycle"`
	Cycles      PublicCycleCounts        `json:"cycles"`
	APIPix      PublicSubscriptionAPIPix `json:"api_pix"`
	CreatedAt   Timestamp                `json:"created_at"`
	Authorized  *Timestamp               `json:"authorized_at"`
	Cancelled   *Timestamp               `json:"cancelled_at"`
	Ended       *Timestamp               `json:"ended_at"`
}

// PublicVariableAmount is a variable subscription's terms.
type PublicVariableAmount struct {
	MaxAmount *int64 `json:"max_amount"`
}

// PublicFirstPayment is the immediate payment of a
// qr_code_with_first_payment subscription and the charge that collects it.
type PublicFirstPayment struct {
	Amount int64  `json:"amount"`
	Charge string `json:"charge"`
}

// PublicPayerAccount is the payer's account an authorization_request's
// request goes to, its number reduced to its last digits.
type PublicPayerAccount struct {
	ISPB        string `json:"ispb"`
	Branch      string `json:"branch"`
	NumberLast4 string `json:"number_last4"`
}

// PublicSubscriptionPix is the QR code a QR-journey payer scans.
type PublicSubscriptionPix struct {
	BRCode    string `json:"br_code"`
	QRCodeURL string `json:"qr_code_url"`
}

// PublicNextCycle is the next cycle to be scheduled; amount is null for a
// variable one whose amount is not set yet.
type PublicNextCycle struct {
	Cycle   int    `json:"cycle"`
	DueDate string `json:"due_date"`
	Amount  *int64 `json:"amount"`
}

// PublicCycleSummary is the cycle the subscription changed last: in a
// subscription.charge_* event, the cycle the event is about.
type PublicCycleSummary struct {
	Cycle         int         `json:"cycle"`
	DueDate       string      `json:"due_date"`
	Amount        int64       `json:"amount"`
	Charge        string      `json:"charge"`
	Status        CycleStatus `json:"status"`
	Attempts      int         `json:"attempts"`
	NextDebitDate *string     `json:"next_debit_date"`
	FailureCode   *string     `json:"failure_code"`
}

// PublicCycleCounts counts the cycles by outcome.
type PublicCycleCounts struct {
	Open    int `json:"open"`
	Paid    int `json:"paid"`
	Failed  int `json:"failed"`
	Skipped int `json:"skipped"`
}

// PublicSubscriptionAPIPix names the subscription in the API Pix's words,
// for a merchant reconciling with its PSP.
type PublicSubscriptionAPIPix struct {
	RecID               *string         `json:"rec_id"`
	RecStatus           RecStatus       `json:"rec_status"`
	SolicRecID          *string         `json:"solicrec_id"`
	SolicRecStatus      *SolicRecStatus `json:"solicrec_status"`
	Periodicidade       string          `json:"periodicidade"`
	PoliticaRetentativa string          `json:"politica_retentativa"`
	Jornada             string          `json:"jornada"`
}

func optStr(v string) *string {
	if v == "" {
		return nil
	}
	return &v
}

func optTime(t time.Time) *Timestamp {
	if t.IsZero() {
		return nil
	}
	ts := Timestamp(t)
	return &ts
}

// Public renders the subscription.
func (s *Subscription) Public(l Links) PublicSubscription {
	v := s.s
	out := PublicSubscription{
		ID: PrefixSubscription + v.ID, Object: "subscription", Status: v.Status,
		Customer: PublicCustomer{Name: v.Payer.Name, Document: v.Payer.Document},
		Currency: CurrencyBRL, Interval: v.Interval, StartDate: v.StartDate.String(), Contract: v.Contract,
		Description: optStr(v.Description), RetryPolicy: v.RetryPolicy, Journey: v.Journey,
		AuthExpires: Timestamp(v.AuthorizationExpiresAt),
		Cycles:      PublicCycleCounts{Open: v.Cycles.Open, Paid: v.Cycles.Paid, Failed: v.Cycles.Failed, Skipped: v.Cycles.Skipped},
		APIPix: PublicSubscriptionAPIPix{RecID: optStr(v.Mandate.RecID), RecStatus: v.Status.RecStatus(),
			SolicRecID: optStr(v.Mandate.SolicRecID), Periodicidade: v.Interval.Periodicidade(),
			PoliticaRetentativa: v.RetryPolicy.PoliticaRetentativa(), Jornada: v.Journey.Jornada()},
		CreatedAt: Timestamp(v.CreatedAt), Authorized: optTime(v.AuthorizedAt), Cancelled: optTime(v.CancelledAt),
		Ended: optTime(v.EndedAt),
	}
	if v.CancelledBy != "" {
		by := v.CancelledBy
		out.CancelledBy = &by
	}
	if v.Mandate.SolicRecStatus != "" {
		st := v.Mandate.SolicRecStatus
		out.APIPix.SolicRecStatus = &st
	}
	if !v.EndDate.IsZero() {
		out.EndDate = optStr(v.EndDate.String())
	}
	if v.Variable {
		out.Variable = &PublicVariableAmount{}
		if v.MaxAmount > 0 {
			m := v.MaxAmount
			out.Variable.MaxAmount = &m
		}
	} else {
		a := v.Amount
		out.Amount = &a
	}
	if v.FirstPayment > 0 {
		out.FirstPay = &PublicFirstPayment{Amount: v.FirstPayment, Charge: PrefixCharge + v.FirstChargeID}
	}
	if a := v.PayerAccount; a != nil {
		out.PayerAcct = &PublicPayerAccount{ISPB: a.ISPB, Branch: a.Branch, NumberLast4: a.LastDigits()}
	}
	if v.Journey.QR() && v.Mandate.BRCode != "" {
		out.Pix = &PublicSubscriptionPix{BRCode: v.Mandate.BRCode, QRCodeURL: l.SubscriptionQRCodeURL(v.ID)}
		out.HostedURL = optStr(l.SubscriptionPageURL(v.ID))
	}
	if (v.Status == SubscriptionActive || v.Status == SubscriptionPendingAuthorization) && s.HasCycle(v.NextCycle) {
		nc := &PublicNextCycle{Cycle: v.NextCycle, DueDate: s.CycleDate(v.NextCycle).String()}
		switch {
		case !v.Variable:
			a := v.Amount
			nc.Amount = &a
		case v.NextAmount > 0:
			a := v.NextAmount
			nc.Amount = &a
		}
		out.NextCycle = nc
	}
	if c := v.Latest; c != nil {
		out.LatestCycle = &PublicCycleSummary{Cycle: c.Cycle, DueDate: c.DueDate.String(), Amount: c.Amount,
			Charge: PrefixCharge + c.ChargeID, Status: c.Status, Attempts: c.Attempts, FailureCode: optStr(c.FailureCode)}
		if !c.NextDebit.IsZero() {
			out.LatestCycle.NextDebitDate = optStr(c.NextDebit.String())
		}
	}
	return out
}

// Masked hides the payer's document for list responses, as charges'.
func (p PublicSubscription) Masked() PublicSubscription {
	p.Customer.Document = MaskDocument(p.Customer.Document)
	return p
}

// SubscriptionStatusEvents lists the events of a subscription's move from
// prev ("" at creation) to to.
func SubscriptionStatusEvents(prev, to SubscriptionStatus) []EventType {
	if prev == to {
		return nil
	}
	switch to {
	case SubscriptionPendingAuthorization:
		return []EventType{EventSubscriptionCreated}
	case SubscriptionActive:
		return []EventType{EventSubscriptionAuthorized}
	case SubscriptionRejected:
		return []EventType{EventSubscriptionRejected}
	case SubscriptionExpired:
		return []EventType{EventSubscriptionExpired}
	case SubscriptionCancelled:
		return []EventType{EventSubscriptionCancelled}
	case SubscriptionCompleted:
		return []EventType{EventSubscriptionCompleted}
	}
	return nil
}

// CycleEvent is the event of a cycle's change: scheduled (its charge
// created), paid, failed for good, or retrying (a debit failed and another
// is scheduled). A cancelled cycle has none of its own: the
// subscription.cancelled that caused it says so.
func CycleEvent(c *Cycle, created bool) (EventType, bool) {
	if created {
		return EventSubscriptionChargeScheduled, true
	}
	switch c.PublicStatus() {
	case CyclePaid:
		return EventSubscriptionChargePaid, true
	case CycleFailed:
		return EventSubscriptionChargeFailed, true
	case CycleRetrying:
		return EventSubscriptionChargeRetrying, true
	case CycleScheduled, CycleCancelled:
	}
	return "", false
}

// NewSubscriptionEvents builds the outbox events of types for s as it is
// now: canonical envelopes whose data.object is the public subscription.
// Event.ChargeID holds the prefixed subscription id (the outbox is keyed
// by the object the event is about).
func NewSubscriptionEvents(s *Subscription, types []EventType, l Links, newID func() (string, error), now time.Time) ([]Event, error) {
	out := make([]Event, 0, len(types))
	for _, t := range types {
		raw, err := newID()
		if err != nil {
			return nil, err
		}
		ev := Event{ID: PrefixEvent + raw, Type: t, AccountID: s.s.AccountID, Mode: s.s.Mode,
			ChargeID: PrefixSubscription + s.s.ID, CreatedAt: now.UTC()}
		env := CanonicalEnvelope{ID: ev.ID, Object: "event", APIVersion: APIVersion, Type: t, CreatedAt: Timestamp(now)}
		env.Data.Object = s.Public(l)
		if ev.Payload, err = json.Marshal(env); err != nil {
			return nil, fmt.Errorf("encode %s envelope: %w", t, err)
		}
		out = append(out, ev)
	}
	return out, nil
}
