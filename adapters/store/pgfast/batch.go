package pgfast

import (
	"context"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
)

// Batch is statements for one connection, sent in one round trip with one
// Sync after the last: one implicit transaction, which the first failure
// rolls back whole. Each statement is prepared on the connection the
// first time (one round trip each, once per connection). Values are
// copied into the batch as statements are added, so the caller's buffers
// may be reused at once.
type Batch struct {
	tables  *Tables
	conn    *pgx.Conn
	b       pgconn.Batch
	scratch [][]byte
}

// NewBatch starts a batch on conn.
func (t *Tables) NewBatch(conn *pgx.Conn) *Batch {
	return &Batch{tables: t, conn: conn}
}

// maxRowsPerInsert is the most rows one INSERT of Batch.Insert carries: 32
// charge rows of ~50 columns bind ~1,600 parameters of Postgres's 65,535.
const maxRowsPerInsert = 32

// Insert adds the INSERTs of rows (each row's values as its plan's Encode
// gave them) into model's table: as few statements as the row counts
// 32, 16, 8, 4, 2 and 1 make, so that a connection prepares at most six
// statements per table.
func (b *Batch) Insert(ctx context.Context, model any, rows [][][]byte) error {
	for len(rows) > 0 {
		k := maxRowsPerInsert
		for k > len(rows) {
			k /= 2
		}
		p := b.tables.Insert(model, k)
		sd, err := p.Prepare(ctx, b.conn)
		if err != nil {
			return err
		}
		b.scratch = b.scratch[:0]
		for _, r := range rows[:k] {
			b.scratch = append(b.scratch, r...)
		}
		b.b.ExecStatement(sd, b.scratch, p.formats, nil)
		rows = rows[k:]
	}
	return nil
}

// Exec adds sql, prepared on the connection as name, with args in text
// format (nil for NULL).
func (b *Batch) Exec(ctx context.Context, name, sql string, args [][]byte) error {
	sd, err := b.conn.Prepare(ctx, name, sql)
	if err != nil {
		return err
	}
	b.b.ExecStatement(sd, args, nil, nil)
	return nil
}

// Send sends the batch and waits for its commit.
func (b *Batch) Send(ctx context.Context) error {
	return b.conn.PgConn().ExecBatch(ctx, &b.b).Close()
}
