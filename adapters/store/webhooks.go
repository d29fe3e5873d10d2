package store

import (
	"context"
	"encoding/json"
	"fmt"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	_ ports.WebhookStore  = (*DB)(nil)
	_ ports.WebhookOutbox = (*DB)(nil)
)

type endpointRow struct {
	bun.BaseModel `bun:"table:webhook_endpoints,alias:we"`

	ID        string `bun:"id,pk"`
	AccountID string `bun:"account_id"`
	Mode      string `bun:"mode"`
	URL       string `bun:"url"`
	Events    string `bun:"events"` // JSON array
	Status    string `bun:"status"`
	Secret    string `bun:"secret"`
	CreatedAt dbTime `bun:"created_at"`
	UpdatedAt dbTime `bun:"updated_at"`
	DeletedAt dbTime `bun:"deleted_at"`
}

func endpointFromDomain(e domain.WebhookEndpoint) (*endpointRow, error) {
	evs, err := json.Marshal(e.Events)
	if err != nil {
		return nil, fmt.Errorf("store: encode events of endpoint %s: %w", e.ID, err)
	}
	return &endpointRow{
		ID: e.ID, AccountID: e.AccountID, Mode: string(e.Mode), URL: e.URL, Events: string(evs),
		Status: string(e.Status), Secret: e.Secret, CreatedAt: newDBTime(e.CreatedAt), UpdatedAt: newDBTime(e.UpdatedAt),
	}, nil
}

func (r *endpointRow) toDomain() (domain.WebhookEndpoint, error) {
	var evs []domain.EventType
	if err := json.Unmarshal([]byte(r.Events), &evs); err != nil {
		return domain.WebhookEndpoint{}, fmt.Errorf("store: decode events of endpoint %s: %w", r.ID, err)
	}
	return domain.WebhookEndpoint{
		ID: r.ID, AccountID: r.AccountID, Mode: domain.Mode(r.Mode), URL: r.URL, Events: evs,
		Status: domain.EndpointStatus(r.Status), Secret: r.Secret, CreatedAt: r.CreatedAt.Time, UpdatedAt: r.UpdatedAt.Time,
	}, nil
}

// CreateEndpoint inserts an endpoint.
func (db *DB) CreateEndpoint(ctx context.Context, e domain.WebhookEndpoint) error {
	row, err := endpointFromDomain(e)
	if err != nil {
		return err
	}
	if row.Secret, err = db.sealSecret(e.ID, e.Secret); err != nil {
		return err
	}
	_, err = db.bun.NewInsert().Model(row).Exec(ctx)
	return mapError(err)
}

func liveEndpoints(q *bun.SelectQuery, scope ports.Scope) *bun.SelectQuery {
	return whereScope(q, scope).Where("we.deleted_at IS NULL")
}

// ListEndpoints returns the scope's endpoints, oldest first.
func (db *DB) ListEndpoints(ctx context.Context, scope ports.Scope) ([]domain.WebhookEndpoint, error) {
	var rows []endpointRow
	if err := liveEndpoints(db.bun.NewSelect().Model(&rows), scope).OrderExpr("we.created_at, we.id").Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make([]domain.WebhookEndpoint, len(rows))
	for i := range rows {
		e, err := db.endpointToDomain(&rows[i])
		if err != nil {
			return nil, err
		}
		out[i] = e
	}
	return out, nil
}

// GetEndpoint returns one endpoint of the scope.
func (db *DB) GetEndpoint(ctx context.Context, scope ports.Scope, id string) (*domain.WebhookEndpoint, error) {
	return db.getEndpoint(ctx, db.bun, scope, id, false)
}

// endpointToDomain converts a row, opening its secret.
func (db *DB) endpointToDomain(r *endpointRow) (domain.WebhookEndpoint, error) {
	e, err := r.toDomain()
	if err != nil {
		return e, err
	}
	e.Secret, err = db.openSecret(e.ID, e.Secret)
	return e, err
}

func (db *DB) getEndpoint(ctx context.Context, idb bun.IDB, scope ports.Scope, id string, forUpdate bool) (*domain.WebhookEndpoint, error) {
	row := new(endpointRow)
	q := liveEndpoints(idb.NewSelect().Model(row), scope).Where("we.id = ?", id)
	if forUpdate && postgres(idb) {
		q = q.For("UPDATE")
	}
	if err := q.Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	e, err := db.endpointToDomain(row)
	if err != nil {
		return nil, err
	}
	return &e, nil
}

// UpdateEndpoint applies a patch under the row lock.
func (db *DB) UpdateEndpoint(ctx context.Context, scope ports.Scope, id string, p ports.EndpointPatch, now time.Time) (*domain.WebhookEndpoint, error) {
	var out *domain.WebhookEndpoint
	err := db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		e, err := db.getEndpoint(ctx, tx, scope, id, true)
		if err != nil {
			return err
		}
		if p.URL != nil {
			e.URL = *p.URL
		}
		if p.Events != nil {
			e.Events = p.Events
		}
		if p.Status != nil {
			e.Status = *p.Status
		}
		e.UpdatedAt = now
		row, err := endpointFromDomain(*e)
		if err != nil {
			return err
		}
		if _, err := tx.NewUpdate().Model(row).Column("url", "events", "status", "updated_at").WherePK().Exec(ctx); err != nil {
			return mapError(err)
		}
		out = e
		return nil
	})
	return out, mapError(err)
}

// RotateEndpointSecret replaces an endpoint's secret.
func (db *DB) RotateEndpointSecret(ctx context.Context, scope ports.Scope, id, secret string, now time.Time) error {
	secret, err := db.sealSecret(id, secret)
	if err != nil {
		return err
	}
	res, err := db.bun.NewUpdate().Model((*endpointRow)(nil)).
		Set("secret = ?", secret).Set("updated_at = ?", newDBTime(now)).
		Where("id = ?", id).Where("account_id = ?", scope.AccountID).Where("mode = ?", string(scope.Mode)).
		Where("deleted_at IS NULL").Exec(ctx)
	return oneRow(res, err)
}

func oneRow(res interface{ RowsAffected() (int64, error) }, err error) error {
	if err != nil {
		return mapError(err)
	}
	n, err := res.RowsAffected()
	if err != nil {
		return mapError(err)
	}
	if n == 0 {
		return ports.ErrNotFound
	}
	return nil
}

// openDeliveryStatusesSQL are the deliveries an endpoint's removal cancels.
const openDeliveryStatusesSQL = "status IN ('PENDING', 'PROCESSING')"

// DeleteEndpoint marks an endpoint deleted and cancels its open deliveries.
func (db *DB) DeleteEndpoint(ctx context.Context, scope ports.Scope, id string, now time.Time) error {
	return mapError(db.bun.RunInTx(ctx, nil, func(ctx context.Context, tx bun.Tx) error {
		res, err := tx.NewUpdate().Model((*endpointRow)(nil)).
			Set("deleted_at = ?", newDBTime(now)).Set("status = ?", string(domain.EndpointInactive)).Set("updated_at = ?", newDBTime(now)).
			Where("id = ?", id).Where("account_id = ?", scope.AccountID).Where("mode = ?", string(scope.Mode)).
			Where("deleted_at IS NULL").Exec(ctx)
		if err := oneRow(res, err); err != nil {
			return err
		}
		return cancelOpenDeliveries(ctx, tx, id, "", now)
	}))
}

// cancelOpenDeliveries cancels an endpoint's PENDING and PROCESSING
// deliveries, except the one named by exceptID.
func cancelOpenDeliveries(ctx context.Context, idb bun.IDB, endpointID, exceptID string, now time.Time) error {
	q := idb.NewUpdate().Model((*deliveryRow)(nil)).
		Set("status = ?", string(domain.DeliveryCancelled)).Set("next_retry_at = NULL").
		Set("lease_token = NULL").Set("lease_until = NULL").Set("updated_at = ?", newDBTime(now)).
		Where("endpoint_id = ?", endpointID).Where(openDeliveryStatusesSQL)
	if exceptID != "" {
		q = q.Where("id <> ?", exceptID)
	}
	_, err := q.Exec(ctx)
	return mapError(err)
}

// RotateTransactionSecret replaces the transaction secret of the scope's
// mode.
func (db *DB) RotateTransactionSecret(ctx context.Context, scope ports.Scope, secret string) error {
	col := "transaction_webhook_secret"
	if scope.Mode == domain.ModeTest {
		col = "test_transaction_webhook_secret"
	}
	secret, err := db.sealSecret(transactionSecretOwner(scope.AccountID, string(scope.Mode)), secret)
	if err != nil {
		return err
	}
	res, err := db.bun.NewUpdate().Model((*accountRow)(nil)).
		Set("? = ?", bun.Ident(col), secret).Where("id = ?", scope.AccountID).Exec(ctx)
	return oneRow(res, err)
}
