package store

import (
	"context"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quitapix/quita/ports"
)

// chargeByID runs a prepared statement instead of having the text parsed
// and planned (the planner sizes each of the charges table's indexes)
// every time: GET /v1/charges/{id} and every read of one charge.
func (p *pgCharges) chargeByID(ctx context.Context, id string) (*chargeRow, error) {
	row := new(chargeRow)
	plan := p.tables.Select(row, "id = $1")
	err := p.pool.Run(ctx, func(conn *pgx.Conn) error { return plan.QueryRow(ctx, conn, row, id) })
	if err != nil {
		return nil, mapError(err)
	}
	return row, nil
}

// idempotencyRecordSQL is a key's record: every create asks it once, so
// it is prepared once per connection rather than parsed and planned each
// time.
const idempotencyRecordSQL = `SELECT fingerprint, resource_id, status_code, ` + answerColumns + `, created_at
FROM idempotency_records WHERE account_id = $1 AND mode = $2 AND "key" = $3`

func (p *pgCharges) idempotencyRecord(ctx context.Context, key ports.IdempotencyKey) (*ports.IdempotencyRecord, error) {
	row := &idempotencyRow{AccountID: key.AccountID, Mode: string(key.Mode), Key: key.Key}
	var created time.Time
	err := p.pool.Run(ctx, func(conn *pgx.Conn) error {
		return conn.QueryRow(ctx, idempotencyRecordSQL, key.AccountID, string(key.Mode), key.Key).
			Scan(&row.Fingerprint, &row.ResourceID, &row.StatusCode, &row.Body, &row.InEvent, &created)
	})
	if err != nil {
		return nil, mapError(err)
	}
	row.CreatedAt = newDBTime(created)
	if err := row.resolve(); err != nil {
		return nil, err
	}
	return row.toPort(), nil
}
