package e2e_test

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/quitatest"
)

// backupState is what a backup must bring back: a paid and refunded
// charge, an open one, and the keys that made them.
type backupState struct {
	acct                 account
	paidKey, openKey     string
	paidBody, openBody   map[string]any
	paidAnswer, refundID string
	refundBody           map[string]any
	charges              int
	wallet               []byte
}

// fillForBackup creates the state on e: two keyed charges, one paid and
// partly refunded to the end (so every ledger movement is in the backup).
func fillForBackup(t *testing.T, e *env) backupState {
	t.Helper()
	s := backupState{acct: e.newAccount(t, "Loja Backup"), paidKey: newKey(), openKey: newKey()}
	s.paidBody = map[string]any{"amount": 10_000, "payment_method": "pix", "description": "backup paid"}
	s.openBody = map[string]any{"amount": 2_500, "payment_method": "pix", "description": "backup open"}
	paid := s.acct.test.do(t, http.MethodPost, "/charges", s.paidBody, hdr{"Idempotency-Key": s.paidKey}).want(t, http.StatusCreated)
	s.paidAnswer = string(paid.Body)
	s.acct.test.do(t, http.MethodPost, "/charges", s.openBody, hdr{"Idempotency-Key": s.openKey}).want(t, http.StatusCreated)
	id := paid.charge(t).ID
	s.acct.test.pay(t, id, map[string]any{}).want(t, http.StatusOK)
	s.refundBody = map[string]any{"idempotencyKey": newKey(), "amount": 3_000, "reason": "backup"}
	var re struct {
		ID string `json:"id"`
	}
	s.acct.test.do(t, http.MethodPost, "/payments/"+id+"/refund", s.refundBody, nil).want(t, http.StatusCreated).Decode(t, &re)
	s.refundID = re.ID
	for range 3 { // PENDING → IN_PROGRESS → REFUNDED
		if _, err := e.srv.App.Payments.AdvanceRefunds(context.Background()); err != nil {
			t.Fatal(err)
		}
	}
	s.charges = e.countRows(t, "charges", s.acct.AccountID)
	s.wallet = s.acct.test.do(t, http.MethodGet, "/wallets", nil, nil).want(t, http.StatusOK).Body
	return s
}

// checkRestored proves a server on the restored database is the same
// service: the ledger verifies, the wallet is unchanged, the old API key
// works, replaying the keys answers the original charge and refund (and
// creates nothing), and new work goes on.
func checkRestored(t *testing.T, srv *quitatest.Server, s backupState) {
	t.Helper()
	problems, err := srv.App.Payments.VerifyLedger(context.Background())
	if err != nil || len(problems) > 0 {
		t.Fatalf("ledger verify on the restored database: %v %v", problems, err)
	}
	c := &client{base: srv.BaseURL, key: s.acct.TestKey}
	if w := c.do(t, http.MethodGet, "/wallets", nil, nil).want(t, http.StatusOK).Body; !bytes.Equal(w, s.wallet) {
		t.Errorf("wallets after restore %s, before %s", w, s.wallet)
	}
	r := c.do(t, http.MethodPost, "/charges", s.paidBody, hdr{"Idempotency-Key": s.paidKey}).want(t, http.StatusCreated)
	if string(r.Body) != s.paidAnswer || r.Header.Get("Idempotent-Replayed") != "true" {
		t.Errorf("replayed key after restore: replayed=%q\n%s\nwant the original\n%s", r.Header.Get("Idempotent-Replayed"), r.Body, s.paidAnswer)
	}
	c.do(t, http.MethodPost, "/charges", s.openBody, hdr{"Idempotency-Key": s.openKey}).want(t, http.StatusCreated)
	other := map[string]any{"amount": 10_001, "payment_method": "pix", "description": "backup paid"}
	c.do(t, http.MethodPost, "/charges", other, hdr{"Idempotency-Key": s.paidKey}).apiErr(t, http.StatusConflict, "idempotency_key_reused", "")
	var re struct {
		ID     string `json:"id"`
		Status string `json:"status"`
	}
	var paid charge
	if err := json.Unmarshal([]byte(s.paidAnswer), &paid); err != nil {
		t.Fatal(err)
	}
	paidID := paid.ID
	c.do(t, http.MethodPost, "/payments/"+paidID+"/refund", s.refundBody, nil).want(t, http.StatusCreated).Decode(t, &re)
	if re.ID != s.refundID {
		t.Errorf("replayed refund key answered refund %s, want %s", re.ID, s.refundID)
	}
	e := &env{srv: srv}
	if n := e.countRows(t, "charges", s.acct.AccountID); n != s.charges {
		t.Errorf("%d charges after the replays, want the %d of the backup", n, s.charges)
	}
	fresh := c.mustCreate(t, pixBody(777))
	c.pay(t, fresh.ID, map[string]any{}).want(t, http.StatusOK)
	if problems, err := srv.App.Payments.VerifyLedger(context.Background()); err != nil || len(problems) > 0 {
		t.Errorf("ledger verify after new work on the restored database: %v %v", problems, err)
	}
}

// tool finds a client program, failing under CI and skipping elsewhere when
// it is missing (scripts/services.sh installs it with PostgreSQL).
func tool(t *testing.T, name string) string {
	t.Helper()
	p, err := exec.LookPath(name)
	if err != nil {
		if ci, _ := strconv.ParseBool(os.Getenv("CI")); ci {
			t.Fatalf("%s not found and CI is set: %v", name, err)
		}
		t.Skipf("%s not found (run `make services`): %v", name, err)
	}
	return p
}

func run(t *testing.T, name string, args ...string) {
	t.Helper()
	out, err := exec.Command(name, args...).CombinedOutput()
	if err != nil {
		t.Fatalf("%s %v: %v\n%s", filepath.Base(name), args, err, out)
	}
}

// A pg_dump of a live database restored into a fresh one is the same
// service, with Redis lost as well (the restored server has its own prefix):
// docs/operations.md, "Back up and restore".
func TestBackupRestorePostgres(t *testing.T) {
	t.Parallel()
	pgDump, pgRestore := tool(t, "pg_dump"), tool(t, "pg_restore")
	src := testenv.PostgresDSN(t)
	url, prefix := testenv.RedisURL(t)
	e := &env{srv: quitatest.NewServer(t, quitatest.Options{DatabaseURL: src, RedisURL: url, RedisPrefix: prefix})}
	s := fillForBackup(t, e)
	dump := filepath.Join(t.TempDir(), "quita.dump")
	// The source server keeps running: pg_dump reads one consistent
	// snapshot without blocking writers.
	run(t, pgDump, "--format=custom", "--no-owner", "--file="+dump, "--dbname="+src)
	restored := testenv.PostgresDSN(t)
	run(t, pgRestore, "--no-owner", "--exit-on-error", "--dbname="+restored, dump)
	url2, prefix2 := testenv.RedisURL(t)
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: restored, RedisURL: url2, RedisPrefix: prefix2})
	checkRestored(t, srv, s)
}

// SQLite's online backup (VACUUM INTO, taken while the server runs)
// restores to the same service.
func TestBackupRestoreSQLite(t *testing.T) {
	t.Parallel()
	e := newEnv(t, backends[1])
	s := fillForBackup(t, e)
	backup := filepath.Join(t.TempDir(), "backup.db")
	if _, err := e.srv.App.DB.Bun().ExecContext(context.Background(), "VACUUM INTO ?", backup); err != nil {
		t.Fatalf("VACUUM INTO: %v", err)
	}
	srv := quitatest.NewServer(t, quitatest.Options{DatabaseURL: "sqlite:" + backup})
	checkRestored(t, srv, s)
}
