package store

import (
	"context"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// deliveryCountRow is one row of delivery_counts: how many deliveries an
// account has in a mode to one endpoint (empty for a charge's webhookUrl) of
// one event type. Triggers on webhook_deliveries keep it in the
// transaction of each statement that inserts or deletes deliveries
// (migration 20261224000001), and none of those four columns of a
// delivery ever changes: the rows of a scope sum to its deliveries.
type deliveryCountRow struct {
	bun.BaseModel `bun:"table:delivery_counts,alias:dc"`

	AccountID  string `bun:"account_id,pk"`
	Mode       string `bun:"mode,pk"`
	EndpointID string `bun:"endpoint_id,pk"`
	EventType  string `bun:"event_type,pk"`
	N          int64  `bun:"n"`
}

// undeliveredSQL is the predicate of webhook_deliveries_undelivered_idx,
// written out in every count that reads the index, so both databases
// see that the index covers the query.
const undeliveredSQL = "d.status <> 'DELIVERED'"

// deliveryTotal is the number of deliveries q's filters match, without
// reading them: the sum of the scope's delivery_counts rows (of the
// endpoint and event type when q names them) when q filters on no
// status; the count of the undelivered index's entries of that status
// when it names one other than DELIVERED; the first less every status
// but DELIVERED for DELIVERED. A charge's deliveries are counted from
// the charge's index (a handful of rows). One statement: one snapshot.
func deliveryTotal(ctx context.Context, idb bun.IDB, q ports.DeliveryQuery) (int, error) {
	if q.ChargeID != "" {
		n, err := deliveryFilter(whereScope(idb.NewSelect().Model((*deliveryRow)(nil)), q.Scope), q).
			Where("d.charge_id = ?", q.ChargeID).Count(ctx)
		return int(n), mapError(err)
	}
	counted := idb.NewSelect().Model((*deliveryCountRow)(nil)).ColumnExpr("COALESCE(SUM(dc.n), 0)").
		Where("dc.account_id = ?", q.AccountID).Where("dc.mode = ?", string(q.Mode))
	undelivered := whereScope(idb.NewSelect().Model((*deliveryRow)(nil)), q.Scope).ColumnExpr("count(*)").Where(undeliveredSQL)
	if q.EndpointID != "" {
		counted = counted.Where("dc.endpoint_id = ?", q.EndpointID)
		undelivered = undelivered.Where("d.endpoint_id = ?", q.EndpointID)
	}
	if q.EventType != "" {
		counted = counted.Where("dc.event_type = ?", string(q.EventType))
		undelivered = undelivered.Where("d.event_type = ?", string(q.EventType))
	}
	var sel *bun.SelectQuery
	switch q.Status {
	case "":
		sel = idb.NewSelect().ColumnExpr("(?) AS n", counted)
	case domain.DeliveryDelivered:
		sel = idb.NewSelect().ColumnExpr("(?) - (?) AS n", counted, undelivered)
	default:
		sel = idb.NewSelect().ColumnExpr("(?) AS n", undelivered.Where("d.status = ?", string(q.Status)))
	}
	var n int64
	if err := sel.Scan(ctx, &n); err != nil {
		return 0, mapError(err)
	}
	return int(n), nil
}

// deliveryFilter adds q's status, event type and endpoint filters.
func deliveryFilter(sel *bun.SelectQuery, q ports.DeliveryQuery) *bun.SelectQuery {
	if q.Status != "" {
		sel = sel.Where("d.status = ?", string(q.Status))
	}
	if q.EventType != "" {
		sel = sel.Where("d.event_type = ?", string(q.EventType))
	}
	if q.EndpointID != "" {
		sel = sel.Where("d.endpoint_id = ?", q.EndpointID)
	}
	return sel
}

// DeliveryStats counts the scope's deliveries per status: the counter
// gives them all, the undelivered index each status but DELIVERED, and
// DELIVERED is the rest (one statement: one snapshot).
func (db *DB) DeliveryStats(ctx context.Context, scope ports.Scope) (ports.DeliveryStats, error) {
	var rows []struct {
		Status string `bun:"status"`
		N      int64  `bun:"n"`
	}
	counted := db.reads().NewSelect().Model((*deliveryCountRow)(nil)).
		ColumnExpr("? AS status", string(domain.DeliveryDelivered)).ColumnExpr("COALESCE(SUM(dc.n), 0) AS n").
		Where("dc.account_id = ?", scope.AccountID).Where("dc.mode = ?", string(scope.Mode))
	undelivered := whereScope(db.reads().NewSelect().Model((*deliveryRow)(nil)), scope).
		ColumnExpr("d.status AS status").ColumnExpr("count(*) AS n").Where(undeliveredSQL).GroupExpr("d.status")
	if err := counted.UnionAll(undelivered).Scan(ctx, &rows); err != nil {
		return nil, mapError(err)
	}
	out := ports.DeliveryStats{}
	for _, s := range domain.DeliveryStatuses {
		out[s] = 0
	}
	for _, r := range rows {
		out[domain.DeliveryStatus(r.Status)] = int(r.N)
	}
	for _, r := range rows {
		if r.Status != string(domain.DeliveryDelivered) {
			out[domain.DeliveryDelivered] -= int(r.N)
		}
	}
	return out, nil
}
