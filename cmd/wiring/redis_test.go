package wiring

import (
	"context"
	"strings"
	"testing"

	"github.com/quitapix/quita/internal/testenv"
)

// TestRedisSpeaksRESP2: the hot path's connections speak RESP2 (under
// RESP3 go-redis looks for push notifications before every reply, which
// Quita never subscribes to), unless QUITA_REDIS_URL asks otherwise.
func TestRedisSpeaksRESP2(t *testing.T) {
	t.Parallel()
	base, _ := testenv.RedisURL(t)
	sep := "?"
	if strings.Contains(base, "?") {
		sep = "&"
	}
	for query, want := range map[string]int{"": 2, sep + "protocol=3": 3} {
		client, closeClient, err := provideRedis(context.Background(), Config{RedisURL: base + query})
		if err != nil {
			t.Fatal(err)
		}
		info, err := client.ClientInfo(context.Background()).Result()
		closeClient()
		if err != nil {
			t.Fatal(err)
		}
		if info.Resp != want {
			t.Errorf("URL query %q: the connection speaks RESP%d, want RESP%d", query, info.Resp, want)
		}
	}
}
