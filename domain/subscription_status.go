package domain

// SubscriptionStatus is the status of a subscription. The values are API
// strings: add, never rename.
type SubscriptionStatus string

// Subscription statuses.
const (
	SubscriptionPendingAuthorization SubscriptionStatus = "pending_authorization"
	SubscriptionActive               SubscriptionStatus = "active"
	SubscriptionRejected             SubscriptionStatus = "rejected"
	SubscriptionExpired              SubscriptionStatus = "expired"
	SubscriptionCancelled            SubscriptionStatus = "cancelled"
	SubscriptionCompleted            SubscriptionStatus = "completed"
)

// subscriptionTransitions is the one table of subscription status changes.
var subscriptionTransitions = map[SubscriptionStatus][]SubscriptionStatus{
	SubscriptionPendingAuthorization: {SubscriptionActive, SubscriptionRejected, SubscriptionExpired, SubscriptionCancelled},
	SubscriptionActive:               {SubscriptionCancelled, SubscriptionCompleted},
	SubscriptionRejected:             nil,
	SubscriptionExpired:              nil,
	SubscriptionCancelled:            nil,
	SubscriptionCompleted:            nil,
}

// Valid reports whether s is a subscription status.
func (s SubscriptionStatus) Valid() bool { _, ok := subscriptionTransitions[s]; return ok }

// Terminal reports whether no further change is possible.
func (s SubscriptionStatus) Terminal() bool { return s.Valid() && len(subscriptionTransitions[s]) == 0 }

// RecStatus is the status of the mandate in the API Pix's words
// (rec.status).
type RecStatus string

// Mandate (rec) statuses.
const (
	RecCreated   RecStatus = "CRIADA"
	RecApproved  RecStatus = "APROVADA"
	RecRejected  RecStatus = "REJEITADA"
	RecExpired   RecStatus = "EXPIRADA"
	RecCancelled RecStatus = "CANCELADA"
)

// RecStatus is the mandate's status for a subscription status: a
// completed subscription's mandate stays APROVADA (its calendar ended).
func (s SubscriptionStatus) RecStatus() RecStatus {
	switch s {
	case SubscriptionActive, SubscriptionCompleted:
		return RecApproved
	case SubscriptionRejected:
		return RecRejected
	case SubscriptionExpired:
		return RecExpired
	case SubscriptionCancelled:
		return RecCancelled
	}
	return RecCreated
}

// SolicRecStatus is the status of the authorisation request of an
// authorization_request subscription (the API Pix's solicrec.status).
type SolicRecStatus string

// Authorisation request statuses.
const (
	SolicRecCreated   SolicRecStatus = "CRIADA"
	SolicRecSent      SolicRecStatus = "ENVIADA"
	SolicRecReceived  SolicRecStatus = "RECEBIDA"
	SolicRecAccepted  SolicRecStatus = "ACEITA"
	SolicRecRejected  SolicRecStatus = "REJEITADA"
	SolicRecExpired   SolicRecStatus = "EXPIRADA"
	SolicRecCancelled SolicRecStatus = "CANCELADA"
)

// solicRecTransitions is the one table of a solicrec's status changes. A
// PSP may report an outcome without the steps before it, so every open
// status may move to any later one.
var solicRecTransitions = map[SolicRecStatus][]SolicRecStatus{
	SolicRecCreated:   {SolicRecSent, SolicRecReceived, SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecSent:      {SolicRecReceived, SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecReceived:  {SolicRecAccepted, SolicRecRejected, SolicRecExpired, SolicRecCancelled},
	SolicRecAccepted:  nil,
	SolicRecRejected:  nil,
	SolicRecExpired:   nil,
	SolicRecCancelled: nil,
}

// Valid reports whether s is a solicrec status.
func (s SolicRecStatus) Valid() bool { _, ok := solicRecTransitions[s]; return ok }

// Open reports whether the request still awaits the payer.
func (s SolicRecStatus) Open() bool { return s.Valid() && len(solicRecTransitions[s]) > 0 }

// CancelledBy says who cancelled a subscription. The values are API
// strings: add, never rename.
type CancelledBy string

// Who cancels.
const (
	CancelledByMerchant CancelledBy = "merchant"
	CancelledByPayer    CancelledBy = "payer"
)
