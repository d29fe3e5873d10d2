package store

import (
	"context"
	"crypto/rand"
	"errors"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

type deliveryRow struct {
	bun.BaseModel `bun:"table:webhook_deliveries,alias:d"`

	ID             string  `bun:"id,pk"`
	AccountID      string  `bun:"account_id"`
	Mode           string  `bun:"mode"`
	EndpointID     string  `bun:"endpoint_id"`
	URL            string  `bun:"url"`
	EventID        string  `bun:"event_id"`
	EventType      string  `bun:"event_type"`
	ChargeID       string  `bun:"charge_id"`
	Payload        []byte  `bun:"payload"`
	Status         string  `bun:"status"`
	Attempts       int     `bun:"attempts"`
	MaxAttempts    int     `bun:"max_attempts"`
	LastStatusCode *int    `bun:"last_status_code"`
	LastError      *string `bun:"last_error"`
	NextRetryAt    dbTime  `bun:"next_retry_at"`
	LeaseToken     *string `bun:"lease_token"`
	LeaseUntil     dbTime  `bun:"lease_until"`
	DeliveredAt    dbTime  `bun:"delivered_at"`
	CreatedAt      dbTime  `bun:"created_at"`
	UpdatedAt      dbTime  `bun:"updated_at"`

	// Filled by ClaimDeliveries' joins only.
	EndpointURL    *string `bun:"ep_url,scanonly"`
	EndpointSecret *string `bun:"ep_secret,scanonly"`
	AccountSecret  *string `bun:"acct_secret,scanonly"`
}

func deliveryFromDomain(d domain.WebhookDelivery) deliveryRow {
	r := deliveryRow{
		ID: d.ID, AccountID: d.AccountID, Mode: string(d.Mode), EndpointID: d.EndpointID, URL: d.URL,
		EventID: d.EventID, EventType: string(d.EventType), ChargeID: d.ChargeID, Payload: nonNil(d.Payload),
		Status: string(d.Status), Attempts: d.Attempts, MaxAttempts: d.MaxAttempts,
		LastStatusCode: d.LastStatusCode, LastError: d.LastError,
		CreatedAt: newDBTime(d.CreatedAt), UpdatedAt: newDBTime(d.UpdatedAt),
	}
	if d.NextRetryAt != nil {
		r.NextRetryAt = newDBTime(*d.NextRetryAt)
	}
	if d.DeliveredAt != nil {
		r.DeliveredAt = newDBTime(*d.DeliveredAt)
	}
	return r
}

func (r *deliveryRow) toDomain() domain.WebhookDelivery {
	return domain.WebhookDelivery{
		ID: r.ID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode), EndpointID: r.EndpointID, URL: r.URL,
		EventID: r.EventID, EventType: domain.EventType(r.EventType), ChargeID: r.ChargeID, Payload: r.Payload,
		Status: domain.DeliveryStatus(r.Status), Attempts: r.Attempts, MaxAttempts: r.MaxAttempts,
		LastStatusCode: r.LastStatusCode, LastError: r.LastError,
		NextRetryAt: r.NextRetryAt.ptr(), DeliveredAt: r.DeliveredAt.ptr(),
		CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}
}

// ClaimDeliveries leases due deliveries. See ports.WebhookStore.
func (db *DB) ClaimDeliveries(ctx context.Context, now, leaseUntil time.Time, limit int, caps ports.ClaimCaps) ([]ports.DeliveryClaim, error) {
	if limit <= 0 {
		return nil, nil
	}
	token, err := domain.NewRawID(rand.Reader)
	if err != nil {
		return nil, err
	}
	var rows []deliveryRow
	err = db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if postgres(tx) {
			if _, err := tx.ExecContext(ctx, pinIndexPlan); err != nil {
				return mapError(err)
			}
		}
		// Expired leases first (rare: a worker died), then due PENDING
		// deliveries; each through its own partial index.
		ids, err := pickDue(ctx, tx, "d.status = 'PROCESSING'", "d.lease_until", now, limit, caps)
		if err != nil {
			return err
		}
		if len(ids) < limit {
			more, err := pickDue(ctx, tx, "d.status = 'PENDING'", "d.next_retry_at", now, limit-len(ids), caps)
			if err != nil {
				return err
			}
			ids = append(ids, more...)
		}
		if len(ids) == 0 {
			return nil
		}
		_, err = tx.NewUpdate().Model((*deliveryRow)(nil)).
			Set("status = ?", string(domain.DeliveryProcessing)).Set("attempts = attempts + 1").
			Set("lease_token = ?", token).Set("lease_until = ?", newDBTime(leaseUntil)).
			Set("next_retry_at = NULL").Set("updated_at = ?", newDBTime(now)).
			Where("id IN (?)", bun.List(ids)).Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		return mapError(tx.NewSelect().Model(&rows).
			ColumnExpr("d.*").
			ColumnExpr("we.url AS ep_url").ColumnExpr("we.secret AS ep_secret").
			ColumnExpr("CASE WHEN d.mode = 'test' THEN a.test_transaction_webhook_secret ELSE a.transaction_webhook_secret END AS acct_secret").
			Join("LEFT JOIN webhook_endpoints AS we ON we.id = d.endpoint_id AND d.endpoint_id <> ''").
			Join("LEFT JOIN accounts AS a ON a.id = d.account_id").
			Where("d.id IN (?)", bun.List(ids)).Scan(ctx))
	})
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]ports.DeliveryClaim, len(rows))
	for i := range rows {
		r := &rows[i]
		c := ports.DeliveryClaim{Delivery: r.toDomain(), LeaseToken: token}
		var err error
		if r.EndpointID != "" {
			c.URL = deref(r.EndpointURL)
			c.Secret, err = db.openSecret(r.EndpointID, deref(r.EndpointSecret))
		} else {
			c.URL = r.URL
			c.Secret, err = db.openSecret(transactionSecretOwner(r.AccountID, r.Mode), deref(r.AccountSecret))
		}
		if err != nil {
			// A secret that does not open (no or another master key) is
			// treated as none: the attempt fails "no signing secret" and
			// retries, and nothing is sent unsigned.
			c.Secret = ""
		}
		out[i] = c
	}
	return out, nil
}

type dueCandidate struct {
	ID         string `bun:"id"`
	AccountID  string `bun:"account_id"`
	EndpointID string `bun:"endpoint_id"`
}

// dueQuery is pickDue's candidate SELECT: up to window due deliveries
// matching statusSQL, oldest due first, passing over endpoints and
// accounts at their caps, locked on Postgres (skipping rows other
// workers hold). In a transaction pinned by pinIndexPlan it walks the
// status's partial index in due order and stops after window rows;
// left to lagging statistics it read and sorted every due delivery — a
// backlog's worth of rows for each claim (40 ms at 60,000 due), which
// capped one endpoint's delivery rate at ~780/s in the chaos run.
func dueQuery(tx bun.IDB, cands *[]dueCandidate, statusSQL, dueCol string, now time.Time, window int, caps ports.ClaimCaps) *bun.SelectQuery {
	q := tx.NewSelect().TableExpr("webhook_deliveries AS d").Column("d.id", "d.account_id", "d.endpoint_id").
		Where(statusSQL).Where("? <= ?", bun.Safe(dueCol), newDBTime(now)).
		Where("(d.endpoint_id = '' OR EXISTS (SELECT 1 FROM webhook_endpoints AS we WHERE we.id = d.endpoint_id AND we.status = 'ACTIVE'))").
		OrderExpr(dueCol).Limit(int64(window))
	if caps.PerEndpoint > 0 {
		q = q.Where("d.endpoint_id NOT IN (SELECT p.endpoint_id FROM webhook_deliveries AS p WHERE p.status = 'PROCESSING' "+
			"AND p.lease_until > ? AND p.endpoint_id <> '' GROUP BY p.endpoint_id HAVING count(*) >= ?)", newDBTime(now), caps.PerEndpoint)
	}
	if caps.PerAccount > 0 {
		q = q.Where("d.account_id NOT IN (SELECT p.account_id FROM webhook_deliveries AS p WHERE p.status = 'PROCESSING' "+
			"AND p.lease_until > ? GROUP BY p.account_id HAVING count(*) >= ?)", newDBTime(now), caps.PerAccount)
	}
	if postgres(tx) {
		q = q.For("UPDATE OF d SKIP LOCKED")
	}
	return q
}

// pickDue selects (and on Postgres locks, skipping rows other workers
// hold) up to limit due deliveries matching statusSQL, oldest due first.
// Deliveries of an INACTIVE endpoint are left waiting. With caps, an
// endpoint or account already at its cap of deliveries in flight is
// passed over (one uncorrelated subquery each, evaluated once), and the
// pick gives no endpoint or account more than its free places:
// candidates come from a window of 4 × limit rows, taken in due order
// while their endpoint and account have room.
func pickDue(ctx context.Context, tx bun.IDB, statusSQL, dueCol string, now time.Time, limit int, caps ports.ClaimCaps) ([]string, error) {
	capped := caps.PerEndpoint > 0 || caps.PerAccount > 0
	window := limit
	if capped {
		window = 4 * limit
	}
	var cands []dueCandidate
	if err := dueQuery(tx, &cands, statusSQL, dueCol, now, window, caps).Scan(ctx, &cands); err != nil {
		return nil, mapError(err)
	}
	perEndpoint, perAccount := map[string]int{}, map[string]int{}
	if capped && len(cands) > 0 {
		var inFlight []struct {
			AccountID  string `bun:"account_id"`
			EndpointID string `bun:"endpoint_id"`
			N          int    `bun:"n"`
		}
		err := tx.NewSelect().TableExpr("webhook_deliveries AS p").Column("p.account_id", "p.endpoint_id").ColumnExpr("count(*) AS n").
			Where("p.status = 'PROCESSING'").Where("p.lease_until > ?", newDBTime(now)).
			GroupExpr("p.account_id, p.endpoint_id").Scan(ctx, &inFlight)
		if err != nil {
			return nil, mapError(err)
		}
		for _, f := range inFlight {
			perAccount[f.AccountID] += f.N
			if f.EndpointID != "" {
				perEndpoint[f.EndpointID] += f.N
			}
		}
	}
	ids := make([]string, 0, min(limit, len(cands)))
	for _, c := range cands {
		if len(ids) == limit {
			break
		}
		if caps.PerAccount > 0 && perAccount[c.AccountID] >= caps.PerAccount {
			continue
		}
		if caps.PerEndpoint > 0 && c.EndpointID != "" && perEndpoint[c.EndpointID] >= caps.PerEndpoint {
			continue
		}
		perAccount[c.AccountID]++
		perEndpoint[c.EndpointID]++
		ids = append(ids, c.ID)
	}
	return ids, nil
}

// CompleteDelivery saves an attempt's outcome under its lease.
func (db *DB) CompleteDelivery(ctx context.Context, d domain.WebhookDelivery, leaseToken string, deactivate bool) error {
	row := deliveryFromDomain(d)
	update := func(ctx context.Context, idb bun.IDB) error {
		res, err := idb.NewUpdate().Model(&row).
			Column("status", "attempts", "last_status_code", "last_error", "next_retry_at", "delivered_at", "updated_at").
			Set("lease_token = NULL").Set("lease_until = NULL").
			Where("d.id = ?", d.ID).Where("d.lease_token = ?", leaseToken).Where("d.status = 'PROCESSING'").
			Exec(ctx)
		if err := oneRow(res, err); err != nil {
			if errors.Is(err, ports.ErrNotFound) {
				return ports.ErrLeaseLost
			}
			return err
		}
		return nil
	}
	if !deactivate || d.EndpointID == "" {
		return update(ctx, db.bun)
	}
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		if err := update(ctx, tx); err != nil {
			return err
		}
		_, err := tx.NewUpdate().Model((*endpointRow)(nil)).
			Set("status = ?", string(domain.EndpointInactive)).Set("updated_at = ?", newDBTime(d.UpdatedAt)).
			Where("id = ?", d.EndpointID).Exec(ctx)
		if err != nil {
			return mapError(err)
		}
		return cancelOpenDeliveries(ctx, tx, d.EndpointID, d.ID, d.UpdatedAt)
	}))
}

// ListDeliveries returns one page of a scope's deliveries, newest first,
// and the total its filters match (deliveryTotal: from the counters, not
// from the deliveries).
func (db *DB) ListDeliveries(ctx context.Context, q ports.DeliveryQuery) ([]domain.WebhookDelivery, int, error) {
	var rows []deliveryRow
	sel := deliveryFilter(whereScope(db.reads().NewSelect().Model(&rows), q.Scope), q)
	if q.ChargeID != "" {
		sel = sel.Where("d.charge_id = ?", q.ChargeID)
	}
	limit := min(max(q.Limit, 1), maxListLimit)
	err := sel.OrderExpr("d.created_at DESC, d.id DESC").Limit(int64(limit)).Offset(int64(max(q.Offset, 0))).Scan(ctx)
	if err != nil {
		return nil, 0, mapError(err)
	}
	total, err := deliveryTotal(ctx, db.reads(), q)
	if err != nil {
		return nil, 0, err
	}
	out := make([]domain.WebhookDelivery, len(rows))
	for i := range rows {
		out[i] = rows[i].toDomain()
	}
	return out, total, nil
}

// RequeueDelivery implements ports.WebhookStore: one more attempt of a
// finished delivery, due at once. A delivery of a deleted endpoint is
// returned unchanged.
func (db *DB) RequeueDelivery(ctx context.Context, scope ports.Scope, id string, now time.Time) (*domain.WebhookDelivery, error) {
	_, err := db.bun.NewUpdate().Model((*deliveryRow)(nil)).
		Set("status = ?", string(domain.DeliveryPending)).
		Set("max_attempts = attempts + 1").
		Set("next_retry_at = ?", newDBTime(now)).
		Set("lease_token = NULL").Set("lease_until = NULL").
		Set("updated_at = ?", newDBTime(now)).
		Where("d.id = ?", id).Where("d.account_id = ?", scope.AccountID).Where("d.mode = ?", string(scope.Mode)).
		Where("d.status IN (?)", bun.List([]string{string(domain.DeliveryDelivered), string(domain.DeliveryFailed), string(domain.DeliveryCancelled)})).
		// A deleted endpoint has nowhere to send to: its deliveries stay.
		Where("d.endpoint_id = '' OR EXISTS (SELECT 1 FROM webhook_endpoints AS e WHERE e.id = d.endpoint_id AND e.deleted_at IS NULL)").
		Exec(ctx)
	if err != nil {
		return nil, mapError(err)
	}
	row := new(deliveryRow)
	if err := scopedByID(ctx, db.bun.NewSelect().Model(row), "d.id", id, scope, &row.AccountID, &row.Mode); err != nil {
		return nil, err
	}
	d := row.toDomain()
	return &d, nil
}

// pinIndexPlan leaves Postgres index scans in index order and nested
// loops only, for the rest of the transaction: the webhook pipeline's
// "oldest first, LIMIT n" reads (outboxClaimQuery, dueQuery) then walk their
// index and stop after n rows. Left to statistics that lag a young,
// fast-growing table, the outbox read chose bitmap scans, a sort and a
// hash join over a sequential scan of every charge: 62 ms a pass, a fifth
// of the machine during the create benchmark.
const pinIndexPlan = `SET LOCAL enable_seqscan = off; SET LOCAL enable_bitmapscan = off;
SET LOCAL enable_hashjoin = off; SET LOCAL enable_mergejoin = off; SET LOCAL enable_sort = off`

// legacyEventTypes are the catalog's types a charge's webhookUrl receives.
var legacyEventTypes = func() []string {
	var out []string
	for _, d := range domain.EventCatalog {
		if d.Event.Legacy() {
			out = append(out, string(d.Event))
		}
	}
	return out
}()
