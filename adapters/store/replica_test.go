package store_test

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"sync"
	"testing"

	"net/url"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/internal/testenv"
	"github.com/quitapix/quita/ports"
)

// TestReadReplicaServesListsNotGets: with a read replica, lists and
// aggregates are read there and a read by id on the primary. The
// "replica" here is a second database that holds other rows, so where
// each read went shows.
func TestReadReplicaServesListsNotGets(t *testing.T) {
	t.Parallel()
	primaryDSN, replicaDSN := testenv.PostgresDSN(t), testenv.PostgresDSN(t)
	db := openStore(t, primaryDSN)
	other := openStore(t, replicaDSN)
	ctx := context.Background()
	onPrimary := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, onPrimary, nil, nil)
	onReplica := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, other, onReplica, nil, nil)

	if err := db.UseReadReplica(ctx, replicaDSN); err != nil {
		t.Fatal(err)
	}
	list, _, err := db.ListCharges(ctx, ports.ChargeQuery{Scope: liveA, Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID() != onReplica.ID() {
		t.Fatalf("ListCharges: %v %v, want the replica's charge", ids(list), err)
	}
	pays, total, err := db.ListPayments(ctx, ports.PaymentQuery{Scope: liveA, Limit: 10, Page: 1})
	if err != nil || total != 1 || len(pays) != 1 || pays[0].ID() != onReplica.ID() {
		t.Fatalf("ListPayments: %v %d %v, want the replica's charge", ids(pays), total, err)
	}
	got, err := db.GetCharge(ctx, liveA, onPrimary.ID())
	if err != nil || got.ID() != onPrimary.ID() {
		t.Fatalf("GetCharge on the primary: %v %v", got, err)
	}
	if _, err := db.GetCharge(ctx, liveA, onReplica.ID()); err == nil {
		t.Fatal("GetCharge read the replica")
	}
}

// TestReadReplicaRefusals: a replica on SQLite, or one that does not
// answer, is refused at start, without the DSN's password in the error.
func TestReadReplicaRefusals(t *testing.T) {
	t.Parallel()
	lite := openStore(t, testenv.SQLiteDSN(t))
	if err := lite.UseReadReplica(t.Context(), "postgres://u@127.0.0.1:1/x"); err == nil {
		t.Error("SQLite took a read replica")
	}
	db := openStore(t, testenv.PostgresDSN(t))
	err := db.UseReadReplica(t.Context(), "postgres://u:hunter2@127.0.0.1:1/x?connect_timeout=1")
	if err == nil || strings.Contains(err.Error(), "hunter2") {
		t.Errorf("an unreachable replica: %v", err)
	}
}

// TestMultiHostDSNFindsThePrimary: a DSN that names several hosts with
// target_session_attrs=read-write (libpq's form, which pgx reads) connects
// to the one that takes writes, past a host that is down — how quitad
// reaches whichever member Patroni promoted without a balancer.
func TestMultiHostDSNFindsThePrimary(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	u.Host = "127.0.0.1:1," + u.Host
	q := u.Query()
	q.Set("target_session_attrs", "read-write")
	q.Set("connect_timeout", "2")
	u.RawQuery = q.Encode()
	db := openStore(t, u.String())
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	if got, err := db.GetCharge(t.Context(), liveA, c.ID()); err != nil || got.ID() != c.ID() {
		t.Fatalf("through the multi-host DSN: %v %v", got, err)
	}
}

// TestWriteOnAReadOnlyServerIsUnavailable: a write that reaches a server
// taking no writes (a member restarting or demoted while the balancer
// still sends it connections; here a session that is read-only by
// default) is ports.ErrStoreUnavailable — a 503 the client retries — not
// an unexplained failure.
func TestWriteOnAReadOnlyServerIsUnavailable(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	openStore(t, dsn) // migrated
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	q := u.Query()
	q.Set("default_transaction_read_only", "on")
	u.RawQuery = q.Encode()
	ro, err := store.Open(t.Context(), u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer ro.Close()
	err = ro.CreateCharge(t.Context(), newCharge(t, liveA, baseTime, nil), nil, nil)
	if !errors.Is(err, ports.ErrStoreUnavailable) {
		t.Fatalf("a write on a read-only server: %v, want ErrStoreUnavailable", err)
	}
}

// cuttableProxy forwards TCP connections to target until cut, which
// closes every connection and refuses new ones: a primary that dies.
type cuttableProxy struct {
	ln    net.Listener
	mu    sync.Mutex
	conns []net.Conn
}

func newCuttableProxy(t *testing.T, target string) *cuttableProxy {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	p := &cuttableProxy{ln: ln}
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			up, err := net.Dial("tcp", target)
			if err != nil {
				c.Close()
				continue
			}
			p.mu.Lock()
			p.conns = append(p.conns, c, up)
			p.mu.Unlock()
			go func() { _, _ = io.Copy(up, c); up.Close() }()
			go func() { _, _ = io.Copy(c, up); c.Close() }()
		}
	}()
	t.Cleanup(p.cut)
	return p
}

func (p *cuttableProxy) cut() {
	p.ln.Close()
	p.mu.Lock()
	defer p.mu.Unlock()
	for _, c := range p.conns {
		c.Close()
	}
}

// TestAPIKeysReadOnTheReplicaWhileThePrimaryIsDown: API keys are looked
// up on the primary, and on the read replica while the primary cannot be
// reached, so requests served from the replica keep authenticating
// through a failover.
func TestAPIKeysReadOnTheReplicaWhileThePrimaryIsDown(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCuttableProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.ln.Addr().String()
	db := openStore(t, viaProxy.String())
	_, _, keys := newAccount(t, db, "replica@example.com")
	if err := db.UseReadReplica(t.Context(), dsn); err != nil { // the same database, reached directly
		t.Fatal(err)
	}
	proxy.cut()
	if _, err := db.GetCharge(t.Context(), liveA, "nope"); !errors.Is(err, ports.ErrStoreUnavailable) {
		t.Fatalf("the primary is still reachable: %v", err)
	}
	rec, acct, err := db.LookupAPIKey(t.Context(), keys[0].Fingerprint)
	if err != nil || rec.ID != keys[0].ID || acct.ID != keys[0].AccountID {
		t.Fatalf("LookupAPIKey with the primary down: %+v %+v %v", rec, acct, err)
	}
	if _, _, err := db.LookupAPIKey(t.Context(), "no-such-fingerprint"); !errors.Is(err, ports.ErrNotFound) {
		t.Fatalf("an unknown key with the primary down: %v, want ErrNotFound", err)
	}
}

// TestListsFallBackToThePrimaryWhenTheReplicaIsDown: a list whose replica
// connection cannot be had (the replica restarting to follow a new
// primary) is read on the primary instead of failing.
func TestListsFallBackToThePrimaryWhenTheReplicaIsDown(t *testing.T) {
	t.Parallel()
	dsn := testenv.PostgresDSN(t)
	db := openStore(t, dsn)
	c := newCharge(t, liveA, baseTime, nil)
	mustCreate(t, db, c, nil, nil)
	u, err := url.Parse(dsn)
	if err != nil {
		t.Fatal(err)
	}
	proxy := newCuttableProxy(t, u.Host)
	viaProxy := *u
	viaProxy.Host = proxy.ln.Addr().String()
	if err := db.UseReadReplica(t.Context(), viaProxy.String()); err != nil {
		t.Fatal(err)
	}
	proxy.cut()
	list, _, err := db.ListCharges(t.Context(), ports.ChargeQuery{Scope: liveA, Limit: 10})
	if err != nil || len(list) != 1 || list[0].ID() != c.ID() {
		t.Fatalf("a list with the replica down: %v %v", ids(list), err)
	}
}
