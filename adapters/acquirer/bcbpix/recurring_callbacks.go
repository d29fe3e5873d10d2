package bcbpix

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// The Pix Automático callbacks: the PSP posts {"recs":[...]} to
// <registered url>/rec when a rec changes and {"cobsr":[...]} to
// <registered url>/cobr when a cobr or one of its attempts does. The
// registered URL is the one of /pix, with the account's callback token,
// so VerifyCallback authenticates them the same way.

// maxCallbackItems bounds the items one callback is read back for.
const maxCallbackItems = 100

// recNotification is a rec as a webhookrec callback carries it.
type recNotification struct {
	IDRec        string        `json:"idRec"`
	Status       string        `json:"status"`
	Encerramento *encerramento `json:"encerramento"`
}

// ParseRecCallback reads a webhookrec callback's body into the recs as it
// states them (ports.ErrMalformedCallback when it is not one). The body is the PSP's word only: NotifyRecurrences reads
// each rec back before anything changes.
func ParseRecCallback(body []byte) ([]ports.Recurrence, error) {
	var cb struct {
		Recs []recNotification `json:"recs"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, fmt.Errorf("%w: the callback body must be {\"recs\":[...]}", ports.ErrMalformedCallback)
	}
	out := make([]ports.Recurrence, 0, len(cb.Recs))
	for _, n := range cb.Recs {
		st, ok := recStatus(n.Status)
		if !validRecID(n.IDRec) || !ok {
			return nil, fmt.Errorf("%w: the callback holds a malformed rec", ports.ErrMalformedCallback)
		}
		out = append(out, ports.Recurrence{RecID: n.IDRec, Status: st,
			CancelledByPayer: st == domain.RecCancelled && n.Encerramento.cancelledByPayer()})
	}
	return out, nil
}

// ParseCobRCallback reads a webhookcobr callback's body into the cobrs as
// it states them (NotifyRecurringCharges reads each back).
func ParseCobRCallback(body []byte) ([]ports.RecurringCharge, error) {
	var cb struct {
		CobsR []cobrBody `json:"cobsr"`
	}
	if err := json.Unmarshal(body, &cb); err != nil {
		return nil, fmt.Errorf("%w: the callback body must be {\"cobsr\":[...]}", ports.ErrMalformedCallback)
	}
	out := make([]ports.RecurringCharge, 0, len(cb.CobsR))
	for i := range cb.CobsR {
		c, err := cb.CobsR[i].recurringCharge()
		if err != nil {
			return nil, fmt.Errorf("%w: the callback holds a malformed cobr", ports.ErrMalformedCallback)
		}
		out = append(out, *c)
	}
	return out, nil
}

// SetRecurringNotifications names what takes the recurring callbacks
// (NotifyRecurrences, NotifyRecurringCharges). Call it before serving.
func (a *Acquirer) SetRecurringNotifications(n ports.RecurringNotifications) { a.recurring = n }

// errNoRecurringNotifications: nothing takes recurring callbacks; the PSP
// retries them.
var errNoRecurringNotifications = fmt.Errorf("%w: no receiver of Pix Automático callbacks", ports.ErrAcquirerNotConfigured)

// NotifyRecurrences handles a webhookrec callback of the account (already
// authenticated with VerifyCallback): each rec it names, up to
// maxCallbackItems, is read back from the PSP (GET /rec/{idRec}) and
// handed to the RecurringNotifications in live mode. A rec the PSP does
// not know, or the receiver does not (ErrNotFound), is ignored. The error of a read or of the receiver is
// returned, so the PSP sends the callback again.
func (a *Acquirer) NotifyRecurrences(ctx context.Context, accountID string, body []byte) (applied, ignored int, err error) {
	n := a.recurring
	if n == nil {
		return 0, 0, errNoRecurringNotifications
	}
	recs, err := ParseRecCallback(body)
	if err != nil {
		return 0, 0, err
	}
	ids := make([]string, len(recs))
	for i, r := range recs {
		ids[i] = r.RecID
	}
	scope := ports.Scope{AccountID: accountID, Mode: domain.ModeLive}
	return notifyEach(ctx, scope, ids, a.GetRecurrence, n.OnRecurrence)
}

// NotifyRecurringCharges handles a webhookcobr callback as
// NotifyRecurrences does a webhookrec one, reading each cobr back (GET
// /cobr/{txid}).
func (a *Acquirer) NotifyRecurringCharges(ctx context.Context, accountID string, body []byte) (applied, ignored int, err error) {
	n := a.recurring
	if n == nil {
		return 0, 0, errNoRecurringNotifications
	}
	charges, err := ParseCobRCallback(body)
	if err != nil {
		return 0, 0, err
	}
	ids := make([]string, len(charges))
	for i, ch := range charges {
		ids[i] = ch.TxID
	}
	scope := ports.Scope{AccountID: accountID, Mode: domain.ModeLive}
	return notifyEach(ctx, scope, ids, a.GetRecurringCharge, n.OnRecurringCharge)
}

// notifyEach reads back each of the first maxCallbackItems ids from the
// PSP and hands what it reads to apply; the rest, and what the PSP or the
// receiver does not know (ErrNotFound), are ignored. Any other error
// stops it, so the PSP sends the callback again.
func notifyEach[T any](ctx context.Context, scope ports.Scope, ids []string,
	read func(context.Context, ports.Scope, string) (*T, error), apply func(context.Context, ports.Scope, T) error,
) (applied, ignored int, err error) {
	for i, id := range ids {
		if i >= maxCallbackItems {
			ignored += len(ids) - i
			break
		}
		cur, err := read(ctx, scope, id)
		if errors.Is(err, ports.ErrNotFound) {
			ignored++
			continue
		}
		if err != nil {
			return applied, ignored, err
		}
		switch err := apply(ctx, scope, *cur); {
		case errors.Is(err, ports.ErrNotFound):
			ignored++ // none of the account's
		case err != nil:
			return applied, ignored, err
		default:
			applied++
		}
	}
	return applied, ignored, nil
}

// registerRecurringWebhooks points the PSP's Pix Automático callbacks at
// hook (PUT /webhookrec and PUT /webhookcobr). A PSP that answers 404 or
// 403 offers no Pix Automático to these credentials: that is logged, not
// an error, so accounts that only take cob keep registering.
func (a *Acquirer) registerRecurringWebhooks(ctx context.Context, c *client, accountID, hook string) error {
	for _, path := range []string{"/webhookrec", "/webhookcobr"} {
		err := c.do(ctx, "PUT", path, map[string]string{"webhookUrl": hook}, nil, true)
		if errors.Is(err, ports.ErrNotFound) || errors.Is(err, ports.ErrAcquirerUnauthorized) {
			a.opts.Log.WarnContext(ctx, "bcbpix: the PSP registers no Pix Automático webhook", "account", accountID,
				"path", strings.TrimPrefix(path, "/"), "error", err)
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}
