package idempotency_test

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/idempotency"
	"github.com/quitapix/quita/ports"
)

// harness is one fresh, empty cache for one test.
type harness struct {
	cache ports.IdempotencyCache
	// shortTTL is a TTL the test may wait out with elapse.
	shortTTL time.Duration
	// elapse lets d pass on the cache's clock.
	elapse func(d time.Duration)
}

const (
	// lockTTL and responseTTL are long enough never to run out during a
	// test, even on a slow machine under -race.
	lockTTL     = time.Minute
	responseTTL = time.Hour

	fpA = "a3f1c0de5b1e4b0f9b0c6f3e2d1a0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3a"
	fpB = "0b9c8d7e6f5a4b3c2d1e0f9a8b7c6d5e4f3aa3f1c0de5b1e4b0f9b0c6f3e2d1a"
)

// testContract runs the ports.IdempotencyCache contract against the cache
// newHarness makes. Every implementation must pass it unchanged.
func testContract(t *testing.T, newHarness func(t *testing.T) harness) {
	ctx := context.Background()

	begin := func(t *testing.T, c ports.IdempotencyCache, key, fp string, ttl time.Duration) ports.Claim {
		t.Helper()
		claim, err := c.Begin(ctx, key, fp, ttl)
		if err != nil {
			t.Fatalf("Begin(%q, %.8s): %v", key, fp, err)
		}
		return claim
	}
	complete := func(t *testing.T, c ports.IdempotencyCache, key, fp string, status int, body []byte, ttl time.Duration) {
		t.Helper()
		if err := c.Complete(ctx, key, fp, status, body, ttl); err != nil {
			t.Fatalf("Complete(%q, %.8s): %v", key, fp, err)
		}
	}
	release := func(t *testing.T, c ports.IdempotencyCache, key, fp string) {
		t.Helper()
		if err := c.Release(ctx, key, fp); err != nil {
			t.Fatalf("Release(%q, %.8s): %v", key, fp, err)
		}
	}
	wantState := func(t *testing.T, got ports.Claim, state ports.ClaimState, fp string) {
		t.Helper()
		if got.State != state || got.Fingerprint != fp {
			t.Fatalf("claim = {State:%d Fingerprint:%.8s}, want {State:%d Fingerprint:%.8s}", got.State, got.Fingerprint, state, fp)
		}
	}
	wantResponse := func(t *testing.T, got ports.Claim, fp string, status int, body []byte) {
		t.Helper()
		wantState(t, got, ports.ClaimCompleted, fp)
		if got.StatusCode != status || !bytes.Equal(got.Body, body) {
			t.Fatalf("response = %d %q, want %d %q", got.StatusCode, got.Body, status, body)
		}
	}

	// A JSON charge a few KB long, with a NUL and non-ASCII bytes, so an
	// encoding that treats the body as text would show.
	bigBody := []byte(`{"id":"ch_1","brcode":"` + strings.Repeat("0002010102122670", 256) + "\x00\xff\xfe" + `"}`)

	t.Run("first Begin acquires", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimAcquired, fpA)
	})

	t.Run("second Begin while in flight reports the holder", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimInFlight, fpA)
		// A different request reusing the key learns who holds it; the
		// caller answers idempotency_key_in_use either way.
		wantState(t, begin(t, h.cache, "k", fpB, lockTTL), ports.ClaimInFlight, fpA)
	})

	t.Run("Begin after Complete replays the response", func(t *testing.T) {
		t.Parallel()
		for _, tc := range []struct {
			name string
			body []byte
		}{
			{"large binary body", bigBody},
			{"empty body", nil},
		} {
			t.Run(tc.name, func(t *testing.T) {
				t.Parallel()
				h := newHarness(t)
				begin(t, h.cache, "k", fpA, lockTTL)
				complete(t, h.cache, "k", fpA, 201, tc.body, responseTTL)
				wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 201, tc.body)
				// Replays stay the same, however often they come.
				wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 201, tc.body)
			})
		}
	})

	t.Run("Begin after CompleteInRecord says the answer is in the record", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		if err := h.cache.CompleteInRecord(ctx, responseTTL, ports.Answered{Key: "k", Fingerprint: fpA, StatusCode: 201}); err != nil {
			t.Fatal(err)
		}
		for _, fp := range []string{fpA, fpB} { // the holder's fingerprint, whoever asks
			got := begin(t, h.cache, "k", fp, lockTTL)
			if got.State != ports.ClaimCompleted || !got.InRecord || got.Fingerprint != fpA || got.StatusCode != 201 || got.Body != nil {
				t.Fatalf("Begin after CompleteInRecord: %+v", got)
			}
		}
		// Release keeps it, like any answer; Complete replaces it.
		release(t, h.cache, "k", fpA)
		complete(t, h.cache, "k", fpA, 200, []byte(`{"id":"ch_1"}`), responseTTL)
		if got := begin(t, h.cache, "k", fpA, lockTTL); got.InRecord {
			t.Fatalf("after Complete: %+v, want the answer itself", got)
		}
		wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 200, []byte(`{"id":"ch_1"}`))
		if err := h.cache.CompleteInRecord(ctx, time.Microsecond, ports.Answered{Key: "k", Fingerprint: fpA, StatusCode: 201}); !errors.Is(err, idempotency.ErrInvalidTTL) {
			t.Fatalf("CompleteInRecord with a TTL under a millisecond: %v", err)
		}
	})

	t.Run("CompleteInRecord marks several keys at once, and none", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		if err := h.cache.CompleteInRecord(ctx, responseTTL); err != nil {
			t.Fatalf("marking none: %v", err)
		}
		keys := []string{"k1", "k2", "k3"}
		var answered []ports.Answered
		for i, k := range keys {
			begin(t, h.cache, k, fpA, lockTTL)
			answered = append(answered, ports.Answered{Key: k, Fingerprint: fpA, StatusCode: 200 + i})
		}
		begin(t, h.cache, "other", fpB, lockTTL) // a claim the call does not name
		if err := h.cache.CompleteInRecord(ctx, responseTTL, answered...); err != nil {
			t.Fatal(err)
		}
		for i, k := range keys {
			got := begin(t, h.cache, k, fpB, lockTTL)
			if got.State != ports.ClaimCompleted || !got.InRecord || got.Fingerprint != fpA || got.StatusCode != 200+i {
				t.Errorf("%s after CompleteInRecord of three: %+v", k, got)
			}
		}
		if got := begin(t, h.cache, "other", fpB, lockTTL); got.State != ports.ClaimInFlight || got.Fingerprint != fpB {
			t.Errorf("a claim not named: %+v, want still in flight", got)
		}
	})

	t.Run("different fingerprint after Complete gets the original", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		complete(t, h.cache, "k", fpA, 201, []byte(`{"id":"ch_1"}`), responseTTL)
		// The cache does not judge: the caller sees fpA != fpB and answers 409.
		wantResponse(t, begin(t, h.cache, "k", fpB, lockTTL), fpA, 201, []byte(`{"id":"ch_1"}`))
	})

	t.Run("Release of an in-flight claim lets a retry acquire", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		release(t, h.cache, "k", fpA)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimAcquired, fpA)
	})

	t.Run("Release after Complete keeps the response", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		complete(t, h.cache, "k", fpA, 402, []byte(`{"error":{}}`), responseTTL)
		release(t, h.cache, "k", fpA)
		release(t, h.cache, "k", fpB)
		wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 402, []byte(`{"error":{}}`))
	})

	t.Run("Release with another fingerprint keeps the claim", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		release(t, h.cache, "k", fpB)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimInFlight, fpA)
	})

	t.Run("Release of an unknown key is a no-op", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		release(t, h.cache, "never-claimed", fpA)
		wantState(t, begin(t, h.cache, "never-claimed", fpA, lockTTL), ports.ClaimAcquired, fpA)
	})

	t.Run("lock TTL expiry lets another request acquire", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		wantState(t, begin(t, h.cache, "k", fpA, h.shortTTL), ports.ClaimAcquired, fpA)
		wantState(t, begin(t, h.cache, "k", fpB, lockTTL), ports.ClaimInFlight, fpA)
		h.elapse(h.shortTTL)
		wantState(t, begin(t, h.cache, "k", fpB, lockTTL), ports.ClaimAcquired, fpB)
		// The first request's late Release must not drop the new claim.
		release(t, h.cache, "k", fpA)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimInFlight, fpB)
	})

	t.Run("response TTL expiry frees the key", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		complete(t, h.cache, "k", fpA, 201, []byte("{}"), h.shortTTL)
		h.elapse(h.shortTTL)
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimAcquired, fpA)
	})

	t.Run("Complete replaces the claim's lock TTL", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, h.shortTTL)
		complete(t, h.cache, "k", fpA, 201, []byte("{}"), responseTTL)
		h.elapse(h.shortTTL)
		wantResponse(t, begin(t, h.cache, "k", fpB, lockTTL), fpA, 201, []byte("{}"))
	})

	t.Run("keys are independent", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k1", fpA, lockTTL)
		complete(t, h.cache, "k1", fpA, 201, []byte("one"), responseTTL)
		wantState(t, begin(t, h.cache, "k2", fpA, lockTTL), ports.ClaimAcquired, fpA)
		release(t, h.cache, "k2", fpA)
		wantResponse(t, begin(t, h.cache, "k1", fpA, lockTTL), fpA, 201, []byte("one"))
	})

	t.Run("bodies are not shared with the caller", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		body := []byte(`{"id":"ch_1"}`)
		begin(t, h.cache, "k", fpA, lockTTL)
		complete(t, h.cache, "k", fpA, 201, body, responseTTL)
		body[2] = 'X'
		got := begin(t, h.cache, "k", fpA, lockTTL)
		got.Body[2] = 'Y'
		wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 201, []byte(`{"id":"ch_1"}`))
	})

	t.Run("TTL under a millisecond is rejected", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		if _, err := h.cache.Begin(ctx, "k", fpA, 0); !errors.Is(err, idempotency.ErrInvalidTTL) {
			t.Errorf("Begin with ttl 0: err = %v, want ErrInvalidTTL", err)
		}
		if err := h.cache.Complete(ctx, "k", fpA, 201, nil, time.Microsecond); !errors.Is(err, idempotency.ErrInvalidTTL) {
			t.Errorf("Complete with ttl 1µs: err = %v, want ErrInvalidTTL", err)
		}
		// Nothing was written.
		wantState(t, begin(t, h.cache, "k", fpA, lockTTL), ports.ClaimAcquired, fpA)
	})

	t.Run("50 concurrent Begins: exactly one acquires", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		const n = 50
		var (
			start  = make(chan struct{})
			wg     sync.WaitGroup
			claims [n]ports.Claim
			errs   [n]error
		)
		for i := range n {
			wg.Go(func() {
				<-start
				claims[i], errs[i] = h.cache.Begin(ctx, "race", fpA, lockTTL)
			})
		}
		close(start)
		wg.Wait()

		acquired := 0
		for i := range n {
			if errs[i] != nil {
				t.Fatalf("Begin #%d: %v", i, errs[i])
			}
			switch claims[i].State {
			case ports.ClaimAcquired:
				acquired++
			case ports.ClaimInFlight:
			default:
				t.Errorf("Begin #%d: state %d, want Acquired or InFlight", i, claims[i].State)
			}
			if claims[i].Fingerprint != fpA {
				t.Errorf("Begin #%d: fingerprint %.8s, want %.8s", i, claims[i].Fingerprint, fpA)
			}
		}
		if acquired != 1 {
			t.Errorf("%d of %d concurrent Begins acquired the key, want exactly 1", acquired, n)
		}
	})

	// A claim reports how long it lasts, and only its holder's Extend
	// keeps it alive.
	t.Run("in-flight claim reports its remaining time", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		begin(t, h.cache, "k", fpA, lockTTL)
		got := begin(t, h.cache, "k", fpA, lockTTL)
		wantState(t, got, ports.ClaimInFlight, fpA)
		if got.Remaining <= lockTTL/2 || got.Remaining > lockTTL {
			t.Fatalf("remaining %v, want about %v", got.Remaining, lockTTL)
		}
	})

	t.Run("Extend renews only the holder's claim", func(t *testing.T) {
		t.Parallel()
		h := newHarness(t)
		extend := func(key, fp string, ttl time.Duration) bool {
			t.Helper()
			ok, err := h.cache.Extend(ctx, key, fp, ttl)
			if err != nil {
				t.Fatalf("Extend(%q, %.8s): %v", key, fp, err)
			}
			return ok
		}
		if extend("missing", fpA, lockTTL) {
			t.Fatal("Extend of a missing key succeeded")
		}
		begin(t, h.cache, "k", fpA, h.shortTTL)
		if extend("k", fpB, lockTTL) {
			t.Fatal("Extend with another fingerprint succeeded")
		}
		if !extend("k", fpA, lockTTL) {
			t.Fatal("the holder's Extend failed")
		}
		h.elapse(h.shortTTL)
		got := begin(t, h.cache, "k", fpA, lockTTL)
		wantState(t, got, ports.ClaimInFlight, fpA)
		if got.Remaining <= h.shortTTL {
			t.Fatalf("remaining %v after an extension to %v", got.Remaining, lockTTL)
		}
		complete(t, h.cache, "k", fpA, 201, []byte("{}"), responseTTL)
		if extend("k", fpA, lockTTL) {
			t.Fatal("Extend of a completed response succeeded")
		}
		wantResponse(t, begin(t, h.cache, "k", fpA, lockTTL), fpA, 201, []byte("{}"))
		if _, err := h.cache.Extend(ctx, "k", fpA, 0); !errors.Is(err, idempotency.ErrInvalidTTL) {
			t.Fatalf("Extend with a zero TTL: %v", err)
		}
	})
}
