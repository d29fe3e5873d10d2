package ports

import (
	"context"

	"github.com/quitapix/quita/domain"
)

// ReviseDueChargeRequest sets the terms of a due-date charge at the
// acquirer (the API Pix's PATCH /cobv/{txid}). Due is the whole of the
// revised terms, never a difference from what the acquirer holds, so that
// asking again after an answer was lost, or after the acquirer accepted a
// revision Quita did not commit, leaves the acquirer with exactly Due.
type ReviseDueChargeRequest struct {
	Scope
	ChargeID    string
	TxID        string
	ProviderRef string
	Due         domain.DueTerms
}

// DueDateReviser is implemented by an acquirer that can revise the terms
// of the due-date charges it opened.
type DueDateReviser interface {
	// ReviseDueCharge sets req.Due on the charge's cob. It is idempotent:
	// the same terms again change nothing. Errors: ErrAcquirerUnavailable
	// (nothing is known; ask again), ErrAcquirerRejected (the acquirer
	// refused: the cob is no longer open to revision, does not exist, or
	// the terms break its rules), ErrAcquirerUnauthorized,
	// ErrAcquirerNotConfigured.
	ReviseDueCharge(ctx context.Context, req ReviseDueChargeRequest) error
}
