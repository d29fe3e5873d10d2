package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
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
// state a second process would need; the Pix is kept for Sends, once per
// send id.
func (a *Acquirer) SendPix(ctx context.Context, req ports.PixSendRequest) (ports.PixSendResult, error) {
	if err := a.call(ctx); err != nil {
		return ports.PixSendResult{}, err
	}
	return a.sendPix(req)
}

// sendPix is SendPix past the round trip (a cashout refund's Pix is part
// of the refund's call).
func (a *Acquirer) sendPix(req ports.PixSendRequest) (ports.PixSendResult, error) {
	if req.Amount <= 0 || !domain.ValidTxID(req.SendID) || !req.Key.Type.Valid() {
		return ports.PixSendResult{}, fmt.Errorf("%w: a Pix send needs an amount, a key and a send id", ports.ErrAcquirerRejected)
	}
	a.mu.Lock()
	a.sends.add(req.SendID, req)
	a.mu.Unlock()
	if req.Key.Type == domain.PixKeyEmail {
		if code, ok := strings.CutSuffix(req.Key.Value, FailingKeyDomain); ok && domain.PayoutFailureMessage(code) != "" {
			return ports.PixSendResult{Status: domain.PayoutFailed, FailureCode: code}, nil
		}
	}
	return ports.PixSendResult{Status: domain.PayoutProcessing}, nil
}

// PixSendStatus implements ports.PixSender: a sandbox Pix stays processing
// (the test helpers decide its outcome).
func (a *Acquirer) PixSendStatus(ctx context.Context, _ ports.Scope, _ string) (ports.PixSendResult, error) {
	if err := a.call(ctx); err != nil {
		return ports.PixSendResult{}, err
	}
	return ports.PixSendResult{Status: domain.PayoutProcessing}, nil
}

// Sends lists the latest Pix sends the sandbox accepted — payouts and
// cashout refunds — at most Config.MaxReturns, oldest first, each send id
// once, for tests.
func (a *Acquirer) Sends() []ports.PixSendRequest {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.sends.list()
}

// cashoutRefPrefix starts the provider reference of a cashout refund: the
// send id of its Pix follows, then, when the Pix failed, ":" and the
// failure code.
const cashoutRefPrefix = "sbx_pix_"

// cashout sends a cashout refund as a Pix out through SendPix, the
// capability payouts use, under the send id domain.RefundSendID derives
// from the refund: a start repeated after a crash (or by another worker)
// is the same Pix. The key is destinationKey or, without one, the payer's
// key as the sandbox (the payer's bank too) knows it. Unlike a payout, a
// refund has no test helper to settle its Pix: the sandbox credits it at
// once, so the refund completes on its first status check; a documented
// failing key, or a destinationKey that is no Pix key (invalid_key), fails
// it.
func (a *Acquirer) cashout(req ports.RefundRequest) (string, error) {
	sendID := domain.RefundSendID(req.AccountID, req.RefundID)
	ref := cashoutRefPrefix + sendID
	key := payerKey(req)
	if req.DestinationKey != "" {
		k, err := domain.ParsePixKey(req.DestinationKey, "")
		if err != nil {
			return ref + ":invalid_key", nil
		}
		key = k
	}
	res, err := a.sendPix(ports.PixSendRequest{Scope: req.Scope, SendID: sendID, Amount: req.Amount, Key: key,
		Description: "devolução"})
	if err != nil {
		return "", err
	}
	if res.Status == domain.PayoutFailed {
		ref += ":" + res.FailureCode
	}
	return ref, nil
}

// cashoutState is the refund status of a cashout refund's reference.
func cashoutState(ref string) (domain.RefundStatus, bool) {
	rest, ok := strings.CutPrefix(ref, cashoutRefPrefix)
	if !ok {
		return "", false
	}
	if strings.Contains(rest, ":") {
		return domain.RefundFailed, true
	}
	return domain.RefundRefunded, true
}

// payerKey is the payer's random (EVP) key as the sandbox bank knows it:
// derived from the charge, so every retry sends to the same key.
func payerKey(req ports.RefundRequest) domain.PixKey {
	sum := sha256.Sum256([]byte("payer:" + req.AccountID + ":" + req.ChargeID))
	sum[6] = sum[6]&0x0f | 0x40 // version 4
	sum[8] = sum[8]&0x3f | 0x80 // RFC 4122 variant
	h := hex.EncodeToString(sum[:16])
	return domain.PixKey{Type: domain.PixKeyEVP, Value: h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]}
}
