package seed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
	"golang.org/x/sync/errgroup"
)

// dropIndexes drops the indexes of tables that back no constraint (the
// keys stay), and returns their definitions: an index built once after
// the copy costs a fraction of one kept up row by row.
func dropIndexes(ctx context.Context, dsn string, tables []string) ([]string, error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, err
	}
	defer conn.Close(ctx)
	rows, err := conn.Query(ctx, `SELECT i.indexrelid::regclass::text, pg_get_indexdef(i.indexrelid) FROM pg_index AS i
		JOIN pg_class AS t ON t.oid = i.indrelid
		WHERE t.relname = ANY($1) AND t.relnamespace = current_schema()::regnamespace AND NOT t.relispartition
		  AND NOT EXISTS (SELECT 1 FROM pg_constraint AS c WHERE c.conindid = i.indexrelid)`, tables)
	if err != nil {
		return nil, err
	}
	var names, defs []string
	for rows.Next() {
		var name, def string
		if err := rows.Scan(&name, &def); err != nil {
			rows.Close()
			return nil, err
		}
		names, defs = append(names, name), append(defs, strings.Replace(def, " ON ONLY ", " ON ", 1))
	}
	rows.Close()
	if err := rows.Err(); err != nil {
		return nil, err
	}
	for _, n := range names {
		if _, err := conn.Exec(ctx, "DROP INDEX "+n); err != nil {
			return nil, err
		}
	}
	return defs, nil
}

// buildIndexes builds the dropped indexes again, two at a time.
func buildIndexes(ctx context.Context, dsn string, defs []string) error {
	next := make(chan string, len(defs))
	for _, d := range defs {
		next <- d
	}
	close(next)
	g, gctx := errgroup.WithContext(ctx)
	for range 2 {
		g.Go(func() error {
			conn, err := pgx.Connect(gctx, dsn)
			if err != nil {
				return err
			}
			defer conn.Close(context.Background())
			if _, err := conn.Exec(gctx, "SET maintenance_work_mem = '256MB'"); err != nil {
				return err
			}
			for d := range next {
				if _, err := conn.Exec(gctx, d); err != nil {
					return fmt.Errorf("rebuild index: %w", err)
				}
			}
			return nil
		})
	}
	return g.Wait()
}

// makeMonths makes the history tables' month partitions from since on, as
// the months ahead are made while a deployment runs, so the copied rows
// land in their months rather than in the DEFAULT partition.
func makeMonths(ctx context.Context, dsn string, since time.Time) error {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return err
	}
	defer conn.Close(ctx)
	for _, t := range []string{"charge_events", "request_logs"} {
		if _, err := conn.Exec(ctx, "SELECT quita_month_partitions($1, $2, 3)", t, since); err != nil {
			return fmt.Errorf("month partitions of %s: %w", t, err)
		}
	}
	return nil
}
