package store

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/uptrace/bun/schema"

	"github.com/quitapix/quita/ports"
)

// selectPlan is one table's SELECT of every column of a row by a
// condition with bound parameters, and the fields to scan them into.
type selectPlan struct {
	sql    string
	fields []*schema.Field
}

// planSelect returns the SELECT of model's table (model: a pointer to a row
// struct) of every column, WHERE cond ($1, $2, … for its values).
func planSelect(d schema.Dialect, model any, cond string) *selectPlan {
	typ := reflect.TypeOf(model).Elem()
	key := typ.String() + " " + cond
	if p, ok := selectPlans.Load(key); ok {
		return p.(*selectPlan)
	}
	t := d.Tables().Get(typ)
	p := &selectPlan{}
	cols := make([]string, len(t.Fields))
	for i, f := range t.Fields {
		p.fields = append(p.fields, f)
		cols[i] = string(f.SQLName)
	}
	p.sql = "SELECT " + strings.Join(cols, ", ") + " FROM " + string(t.SQLName) + " WHERE " + cond
	selectPlans.Store(key, p)
	return p
}

// dest is what Scan fills: a pointer to each of row's fields, in the
// plan's column order (dbTime scans itself; pointer fields take NULL).
func (p *selectPlan) dest(row any) []any {
	v := reflect.ValueOf(row).Elem()
	out := make([]any, len(p.fields))
	for i, f := range p.fields {
		out[i] = v.FieldByIndex(f.Index).Addr().Interface()
	}
	return out
}

// getChargeBound is selectCharge of a scope's charge on Postgres over the
// hot pool: GET /v1/charges/{id} and every read of one charge runs a
// prepared statement instead of having the text parsed and planned (the
// planner sizes each of the charges table's indexes) every time.
func (db *DB) getChargeBound(ctx context.Context, scope ports.Scope, id string) (*chargeRow, error) {
	row := new(chargeRow)
	p := planSelect(db.bun.Dialect(), row, "id = $1")
	err := retryLostConn(func() error {
		conn, err := acquire(ctx, db.hot)
		if err != nil {
			return err
		}
		defer conn.Release()
		return conn.QueryRow(ctx, p.sql, id).Scan(p.dest(row)...)
	})
	if err != nil {
		return nil, mapError(err)
	}
	if !row.inScope(scope) {
		return nil, ports.ErrNotFound
	}
	return row, nil
}

// acquire takes a connection of pool, waiting at most poolAcquireTimeout
// (then ports.ErrStoreUnavailable, as for the main pool).
func acquire(ctx context.Context, pool *pgxpool.Pool) (*pgxpool.Conn, error) {
	actx, cancel := context.WithTimeout(ctx, poolAcquireTimeout)
	defer cancel()
	conn, err := pool.Acquire(actx)
	if err != nil {
		if ctx.Err() == nil && actx.Err() != nil {
			return nil, fmt.Errorf("%w: no database connection free within %s", ports.ErrStoreUnavailable, poolAcquireTimeout)
		}
		return nil, mapError(err)
	}
	return conn, nil
}

var selectPlans sync.Map // reflect.Type + condition → *selectPlan
