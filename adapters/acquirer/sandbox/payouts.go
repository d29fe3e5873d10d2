package sandbox

import (
	"context"
	"fmt"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.PixSender = (*Acquirer)(nil)

// FailingKeyDomain makes the documented failing test keys: a payout to the
// e-mail key <failure code>@sandbox.quita.dev (invalid_key@sandbox.quita.dev,
// account_closed@sandbox.quita.dev, ...) fails on its own with that code,
// as the PSP would answer. Every other sandbox payout stays processing
// until a test helper pays or fails it.
const FailingKeyDomain = "@sandbox.quita.dev"

// SendPix implements ports.PixSender. The answer depends only on the
// request, so a repeated send id answers the same and the sandbox keeps no
// state a second process would need.
func (a *Acquirer) SendPix(_ context.Context, req ports.PixSendRequest) (ports.PixSendResult, error) {
	if a.down.Load() {
		return ports.PixSendResult{}, ports.ErrAcquirerUnavailable
	}
	if req.Amount <= 0 || !domain.ValidTxID(req.SendID) || !req.Key.Type.Valid() {
		return ports.PixSendResult{}, fmt.Errorf("%w: a Pix send needs an amount, a key and a send id", ports.ErrAcquirerRejected)
	}
	if req.Key.Type == domain.PixKeyEmail {
		if code, ok := strings.CutSuffix(req.Key.Value, FailingKeyDomain); ok && domain.PayoutFailureMessage(code) != "" {
			return ports.PixSendResult{Status: domain.PayoutFailed, FailureCode: code}, nil
		}
	}
	return ports.PixSendResult{Status: domain.PayoutProcessing}, nil
}

// PixSendStatus implements ports.PixSender: a sandbox Pix stays processing
// (the test helpers decide its outcome).
func (a *Acquirer) PixSendStatus(context.Context, ports.Scope, string) (ports.PixSendResult, error) {
	if a.down.Load() {
		return ports.PixSendResult{}, ports.ErrAcquirerUnavailable
	}
	return ports.PixSendResult{Status: domain.PayoutProcessing}, nil
}
