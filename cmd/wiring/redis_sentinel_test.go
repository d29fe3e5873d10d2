package wiring

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quitapix/quita/internal/testenv"
)

// freePort is a loopback port nothing listens on right now.
func freePort(t *testing.T) int {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer ln.Close()
	return ln.Addr().(*net.TCPAddr).Port
}

// startRedis runs redis-server with args in its own folder until the test
// ends, and waits for it to answer on port.
func startRedis(t *testing.T, bin string, port int, args ...string) {
	t.Helper()
	dir := t.TempDir()
	cmd := exec.Command(bin, args...)
	cmd.Dir = dir
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cmd.Process.Kill(); _ = cmd.Wait() })
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(port)})
	defer c.Close()
	for deadline := time.Now().Add(10 * time.Second); c.Ping(context.Background()).Err() != nil; time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("redis-server %v did not answer on %d", args, port)
		}
	}
}

// TestRedisSentinelFollowsTheMaster: QUITA_REDIS_URL in go-redis's
// Sentinel form (master_name) gives quitad a client that finds the master
// through the sentinels and, after the sentinels fail it over to the
// replica, writes to the new master — with quitad's fast-fail settings.
func TestRedisSentinelFollowsTheMaster(t *testing.T) {
	t.Parallel()
	bin := testenv.Binary(t, "redis-server")
	master, replica, sentinel := freePort(t), freePort(t), freePort(t)
	common := []string{"--bind", "127.0.0.1", "--save", "", "--appendonly", "no"}
	startRedis(t, bin, master, append([]string{"--port", strconv.Itoa(master)}, common...)...)
	startRedis(t, bin, replica, append([]string{"--port", strconv.Itoa(replica), "--replicaof", "127.0.0.1", strconv.Itoa(master)}, common...)...)
	conf := filepath.Join(t.TempDir(), "sentinel.conf")
	body := fmt.Sprintf("port %d\nbind 127.0.0.1\nsentinel monitor quita 127.0.0.1 %d 1\nsentinel down-after-milliseconds quita 1000\nsentinel failover-timeout quita 5000\n", sentinel, master)
	if err := os.WriteFile(conf, []byte(body), 0o600); err != nil {
		t.Fatal(err)
	}
	startRedis(t, bin, sentinel, conf, "--sentinel")

	ctx := context.Background()
	client, closeClient, err := provideRedis(ctx, Config{RedisURL: fmt.Sprintf("redis://127.0.0.1:%d?master_name=quita", sentinel)})
	if err != nil {
		t.Fatal(err)
	}
	defer closeClient()
	if err := client.Set(ctx, "k", "before", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if info, err := client.ClientInfo(ctx).Result(); err != nil || info.Resp != 2 {
		t.Fatalf("client info %+v %v, want RESP2", info, err)
	}
	// Wait until the sentinel knows the replica, then fail over.
	sc := redis.NewSentinelClient(&redis.Options{Addr: "127.0.0.1:" + strconv.Itoa(sentinel)})
	defer sc.Close()
	for deadline := time.Now().Add(15 * time.Second); ; time.Sleep(100 * time.Millisecond) {
		reps, err := sc.Replicas(ctx, "quita").Result()
		if err == nil && len(reps) == 1 && strings.Contains(fmt.Sprint(reps[0]), "master-link-status:ok") ||
			err == nil && len(reps) == 1 && reps[0]["master-link-status"] == "ok" {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the sentinel never saw the replica: %v %v", reps, err)
		}
	}
	if err := sc.Failover(ctx, "quita").Err(); err != nil {
		t.Fatal(err)
	}
	want := "127.0.0.1:" + strconv.Itoa(replica)
	rc := redis.NewClient(&redis.Options{Addr: want})
	defer rc.Close()
	var wrote bool
	for deadline := time.Now().Add(20 * time.Second); time.Now().Before(deadline); time.Sleep(100 * time.Millisecond) {
		if client.Set(ctx, "k", "after", 0).Err() != nil {
			continue
		}
		if v, _ := rc.Get(ctx, "k").Result(); v == "after" {
			if role, _ := rc.Do(ctx, "ROLE").Slice(); len(role) > 0 && role[0] == "master" {
				wrote = true
				break
			}
		}
	}
	if !wrote {
		t.Fatal("after the failover quitad's client never wrote to the promoted replica")
	}
}

// TestRedisURLForms: the URL's form picks the client; a bad URL is an
// error that never echoes the URL (it may hold a password).
func TestRedisURLForms(t *testing.T) {
	t.Parallel()
	for url, want := range map[string]string{
		"redis://127.0.0.1:6379/3":                                       "*redis.Client",
		"redis://127.0.0.1:7000?addr=127.0.0.1:7001&addr=127.0.0.1:7002": "*redis.ClusterClient",
		"redis://127.0.0.1:7000?cluster=true":                            "*redis.ClusterClient",
		"redis://127.0.0.1:26379?master_name=m&addr=127.0.0.1:26380":     "*redis.Client",
	} {
		c, err := newRedisClient(url)
		if err != nil {
			t.Errorf("%s: %v", url, err)
			continue
		}
		if got := fmt.Sprintf("%T", c); got != want {
			t.Errorf("%s: %s, want %s", url, got, want)
		}
		if cc, ok := c.(*redis.ClusterClient); ok {
			if o := cc.Options(); o.ReadTimeout != 200*time.Millisecond || o.MaxRetries != -1 || o.Protocol != 2 || !o.ContextTimeoutEnabled {
				t.Errorf("%s: options %+v, want quitad's fast-fail defaults", url, o)
			}
		}
		c.Close()
	}
	for _, bad := range []string{"http://secret@h:1", "redis://:pw@h:1?master_name=m&bogus=1", "redis://:pw@h:1?addr=nohostport"} {
		_, err := newRedisClient(bad)
		if err == nil || strings.Contains(err.Error(), "pw") || strings.Contains(err.Error(), "secret") {
			t.Errorf("%s: %v", bad, err)
		}
	}
}
