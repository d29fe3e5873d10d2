package exactlyonce

import (
	"context"
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// Attempt is one run of a write under its key (Runner.Do).
type Attempt struct {
	// Key is the write's durable key: its record goes under it.
	Key         ports.IdempotencyKey
	fingerprint string
	r           *Runner
	// checked: the database's check ran before the write (the key was
	// unused then).
	checked bool
	// txid is the cob's txid, once chosen (TxID).
	txid string
	// intentInStore: the store holds this write's cob intent, for the
	// commit to settle (Record) or, should the write fail before asking
	// for the cob, for settle to delete.
	intentInStore bool
	// cached is the cob intent the cache records since the claim
	// (CacheFirst); used unless the write was checked.
	cached   *cachedIntent
	cobAsked bool
	// ran and failed: the write ran, and returned an error.
	ran, failed bool
}

// cachedIntent is a cob intent the cache records while the request's key
// is being claimed, so the claim and the intent's write go to Redis
// together; the cob waits for it.
type cachedIntent struct {
	in ports.ProviderIntent
	// wait returns once the intent is recorded, or why it is not.
	wait func() error
}

// startCachedIntent starts recording a cob intent with a txid of its own
// in the cache, without waiting: the request sends it before its claim
// (ports.CobIntents.StartCobIntent), so it travels in its claim's batch.
func (a *Attempt) startCachedIntent() error {
	raw, err := a.r.ids.NewID()
	if err != nil {
		return err
	}
	in := ports.ProviderIntent{Key: a.Key, TxID: domain.CobTxID(raw), CreatedAt: a.r.clock.Now()}
	a.cached = &cachedIntent{in: in, wait: a.r.cobs.StartCobIntent(context.Background(), in)}
	return nil
}

// TxID is the txid the write's cob must be opened with: derived from the
// key when the database was checked (a retry after any crash asks for the
// same cob), the cached intent's own otherwise, or a fresh one for a cob
// no intent covers (test mode).
func (a *Attempt) TxID() (string, error) {
	switch {
	case a.txid != "":
	case a.checked:
		a.txid = a.derivedTxID()
	case a.cached != nil:
		a.txid = a.cached.in.TxID
	default:
		raw, err := a.r.ids.NewID()
		if err != nil {
			return "", err
		}
		a.txid = domain.CobTxID(raw)
	}
	return a.txid, nil
}

func (a *Attempt) derivedTxID() string {
	return CheckedTxID(a.Key)
}

// CheckedTxID is the txid the cob of a write under key is asked for when
// the database was checked before the write (always, under
// Options.DatabaseOnly): derived from the key alone, so whoever knows the
// key knows the txid before the write runs.
func CheckedTxID(key ports.IdempotencyKey) string {
	return domain.DeriveTxID(key.AccountID, string(key.Mode), key.Key)
}

// BeforeCob makes sure the intent of the write's live cob is recorded
// before the acquirer is asked for it, so that whatever happens next the
// sweep can find the cob if the write never commits, and returns the
// cob's txid. After it the write has asked for its cob, as far as the
// runner is concerned: a failure leaves the intent to the sweep.
func (a *Attempt) BeforeCob(ctx context.Context) (string, error) {
	txid, err := a.TxID()
	if err != nil {
		return "", err
	}
	switch {
	case a.Key.Mode != domain.ModeLive, a.intentInStore: // a test cob cannot be paid; or recorded already
	case !a.checked && a.cached != nil:
		if err := a.cached.wait(); err != nil {
			return "", fmt.Errorf("%w: %w", ports.ErrStoreUnavailable, err)
		}
	default:
		if err := a.r.store.RecordProviderIntent(ctx, ports.ProviderIntent{Key: a.Key, TxID: txid, CreatedAt: a.r.clock.Now()}); err != nil {
			return "", err
		}
		a.intentInStore = true
	}
	a.cobAsked = true
	return txid, nil
}

// Record is the idempotency record the write commits with its resource:
// the answer every retry of the key gets. Committing it settles the
// store's intent of the write's cob, if the store holds one.
func (a *Attempt) Record(resourceID string, resp Response, now time.Time) *ports.IdempotencyRecord {
	return &ports.IdempotencyRecord{
		IdempotencyKey: a.Key, Fingerprint: a.fingerprint, ResourceID: resourceID,
		StatusCode: resp.StatusCode, Body: resp.Body, CreatedAt: now,
		SettlesIntent: a.intentInStore,
	}
}

// settle cleans up the intents of a finished attempt: a store intent of
// a write refused before any cob exists is deleted (nothing for the sweep
// to cancel); a cached intent is dropped off the request's path once the
// write committed, asked for no cob, or never ran. A cob asked for by a
// failed write keeps its intent for the sweep.
func (a *Attempt) settle(ctx context.Context) {
	if a.intentInStore && a.failed && !a.cobAsked {
		if err := a.r.store.DeleteProviderIntent(context.WithoutCancel(ctx), a.Key); err != nil {
			a.r.log.WarnContext(ctx, "delete the intent of a refused create", "err", err)
		}
	}
	if a.cached != nil && (!a.ran || a.checked || !a.failed || !a.cobAsked) {
		a.r.drops.add(a.cached, a.r.background.Go, a.r.dropIntents)
	}
}

func (r *Runner) dropIntents(batch []*cachedIntent) {
	ins := make([]ports.ProviderIntent, 0, len(batch))
	for _, c := range batch {
		if c.wait() == nil { // else never recorded
			ins = append(ins, c.in)
		}
	}
	if len(ins) == 0 {
		return
	}
	if err := r.cobs.DropCobIntent(context.Background(), ins...); err != nil {
		r.log.Warn("drop cob intents", "count", len(ins), "err", err)
	}
}
