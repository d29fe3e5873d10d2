package seed

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// tableRows is one table's template rows, as cells.
type tableRows struct {
	table string
	cols  []string
	rows  [][]cell
}

// tmpl is a template unit (or the account's own rows) ready to copy.
type tmpl struct {
	kind   unitKind
	start  time.Time
	tables []tableRows
	tokens *tokens
}

// freshColumns are the columns whose values must differ between copies
// (unique, or meant to be: txids, end-to-end ids, keys, e-mails).
var freshColumns = map[string][]string{
	"charges":             {"pix_txid", "settlement_end_to_end_id", "provider_ref"},
	"refunds":             {"end_to_end_id", "provider_ref"},
	"payouts":             {"send_id", "end_to_end_id", "provider_ref"},
	"idempotency_records": {"key"},
	"api_keys":            {"fingerprint"},
	"users":               {"email", "email_key"},
}

// unitQueries select a unit's rows per table; $1 is the root raw id, $2
// the account, $3 and $4 the unit's request window.
var unitQueries = []struct{ table, where string }{
	{"charges", "id = $1"},
	{"payouts", "id = $1"},
	{"refunds", "charge_id = $1"},
	{"charge_events", "charge_id IN ($1, 'po_' || $1)"},
	{"webhook_deliveries", "event_id IN (SELECT id FROM charge_events WHERE charge_id IN ($1, 'po_' || $1) UNION ALL SELECT twin_id FROM charge_events WHERE charge_id IN ($1, 'po_' || $1))"},
	{"ledger_entries", "charge_id = $1 OR payout_id = $1"},
	{"ledger_postings", "entry_id IN (SELECT id FROM ledger_entries WHERE charge_id = $1 OR payout_id = $1)"},
	{"ledger_holds", "charge_id = $1"},
	{"ledger_hold_takes", "charge_id = $1"},
	{"idempotency_records", "resource_id = $1 OR resource_id IN (SELECT id FROM refunds WHERE charge_id = $1)"},
	{"request_logs", "$1::text <> '' AND account_id = $2 AND created_at >= $3 AND created_at < $4 AND path NOT LIKE '/v1/test_helpers/%'"},
}

// accountTables hold the account's own rows (wallets are rebuilt).
var accountTables = []string{"accounts", "users", "api_keys", "account_settings", "webhook_endpoints"}

// columns lists a table's columns but its identity (generated) ones, with
// the expression that reads each (json as text).
func columns(ctx context.Context, conn *pgx.Conn, table string) (names, reads []string, err error) {
	rows, err := conn.Query(ctx, `SELECT column_name, data_type FROM information_schema.columns
		WHERE table_schema = current_schema() AND table_name = $1 AND is_identity = 'NO' ORDER BY ordinal_position`, table)
	if err != nil {
		return nil, nil, err
	}
	defer rows.Close()
	for rows.Next() {
		var name, typ string
		if err := rows.Scan(&name, &typ); err != nil {
			return nil, nil, err
		}
		read := `"` + name + `"`
		if typ == "jsonb" || typ == "json" {
			read += "::text"
		}
		names, reads = append(names, name), append(reads, read)
	}
	return names, reads, rows.Err()
}

// extract reads the rows of queries (table, where) with args into a
// template; values of account raw ids are marked account-level.
func extract(ctx context.Context, conn *pgx.Conn, queries []struct{ table, where string }, args []any, around time.Time, acct map[string]bool) (*tmpl, error) {
	type raw struct {
		table string
		cols  []string
		vals  [][]any
	}
	var raws []raw
	var fresh []string
	for _, q := range queries {
		cols, reads, err := columns(ctx, conn, q.table)
		if err != nil {
			return nil, err
		}
		used := args
		for len(used) > 1 && !strings.Contains(q.where, fmt.Sprintf("$%d", len(used))) {
			used = used[:len(used)-1]
		}
		rows, err := conn.Query(ctx, fmt.Sprintf("SELECT %s FROM %s WHERE %s", strings.Join(reads, ", "), q.table, q.where), used...)
		if err != nil {
			return nil, fmt.Errorf("template %s: %w", q.table, err)
		}
		r := raw{table: q.table, cols: cols}
		for rows.Next() {
			v, err := rows.Values()
			if err != nil {
				rows.Close()
				return nil, err
			}
			r.vals = append(r.vals, v)
			for _, fc := range freshColumns[q.table] {
				for i, c := range cols {
					if s, ok := v[i].(string); ok && c == fc && len(s) >= 8 {
						fresh = append(fresh, s)
					}
				}
			}
		}
		rows.Close()
		if err := rows.Err(); err != nil {
			return nil, err
		}
		if len(r.vals) > 0 {
			raws = append(raws, r)
		}
	}
	t := &tmpl{tokens: newTokens()}
	for _, f := range fresh {
		t.tokens.add(token{kind: tokenFresh, text: f})
	}
	for _, r := range raws {
		tr := tableRows{table: r.table, cols: r.cols}
		for _, v := range r.vals {
			row := make([]cell, len(v))
			for i, x := range v {
				switch x := x.(type) {
				case time.Time:
					row[i].instant = &x
				case string:
					row[i].pieces, row[i].text = t.tokens.split([]byte(x), around, fresh), true
				case []byte:
					row[i].pieces, row[i].text, row[i].isBytes = t.tokens.split(x, around, fresh), true, true
				default:
					row[i].plain = x
				}
				row[i].settle()
			}
			tr.rows = append(tr.rows, row)
		}
		t.tables = append(t.tables, tr)
	}
	for i, tok := range t.tokens.list {
		if acct[tok.text] {
			t.tokens.list[i].account = true
		}
	}
	return t, nil
}

// loadTemplates reads the account's rows and every unit's.
func loadTemplates(ctx context.Context, dsn string, tp *templates) (account *tmpl, units []*tmpl, err error) {
	conn, err := pgx.Connect(ctx, dsn)
	if err != nil {
		return nil, nil, err
	}
	defer conn.Close(ctx)
	around := tp.units[0].start
	var aq []struct{ table, where string }
	for _, t := range accountTables {
		w := "account_id = $1"
		if t == "accounts" {
			w = "id = $1"
		}
		aq = append(aq, struct{ table, where string }{t, w})
	}
	account, err = extract(ctx, conn, aq, []any{tp.accountID}, around, nil)
	if err != nil {
		return nil, nil, err
	}
	account.start = around
	acct := map[string]bool{}
	for i := range account.tokens.list {
		account.tokens.list[i].account = true
		acct[account.tokens.list[i].text] = true
	}
	for _, u := range tp.units {
		t, err := extract(ctx, conn, unitQueries, []any{u.root, tp.accountID, u.start, u.end}, around, acct)
		if err != nil {
			return nil, nil, err
		}
		t.kind, t.start = u.kind, u.start
		units = append(units, t)
	}
	return account, units, nil
}
