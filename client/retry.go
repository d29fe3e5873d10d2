package client

import (
	"context"
	"errors"
	"io"
	mrand "math/rand/v2"
	"net"
	"net/http"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// shouldRetry decides whether attempt (0-based) is followed by another,
// and after how long.
func (c *Client) shouldRetry(class retryClass, err error, apiErr *Error, attempt int) (time.Duration, bool) {
	if attempt >= c.retry.MaxRetries {
		return 0, false
	}
	backoff := c.backoff(attempt)
	if apiErr == nil {
		if (class == safeToRetry && transient(err)) || refusedConnection(err) {
			return backoff, true
		}
		return 0, false
	}
	switch {
	case apiErr.HTTPStatus == http.StatusTooManyRequests,
		apiErr.HTTPStatus == http.StatusServiceUnavailable && apiErr.Code == "service_unavailable":
		// The server did nothing: safe for any request.
	case class != safeToRetry:
		return 0, false
	case apiErr.HTTPStatus == http.StatusConflict && apiErr.Code == "idempotency_key_in_use",
		apiErr.HTTPStatus >= 500:
	default:
		return 0, false
	}
	if apiErr.RetryAfter > 0 {
		if apiErr.RetryAfter > c.retry.MaxRetryAfter {
			return 0, false
		}
		return apiErr.RetryAfter, true
	}
	return backoff, true
}

// backoff is full jitter over an exponential ceiling.
func (c *Client) backoff(attempt int) time.Duration {
	ceil := c.retry.BaseDelay << min(attempt, 20)
	if ceil <= 0 || ceil > c.retry.MaxDelay {
		ceil = c.retry.MaxDelay
	}
	return time.Duration(mrand.Int64N(int64(ceil))) + 1
}

// transient reports a network failure a new attempt may not meet: a
// broken or timed-out connection. A request the transport refused to send
// (an invalid header) is not one.
func transient(err error) bool {
	var op *net.OpError
	if errors.As(err, &op) {
		return true
	}
	var ne net.Error
	if errors.As(err, &ne) && ne.Timeout() {
		return true
	}
	return errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, syscall.ECONNRESET)
}

// refusedConnection reports an error that proves the request never
// reached a server: the dial failed.
func refusedConnection(err error) bool {
	var op *net.OpError
	return errors.As(err, &op) && op.Op == "dial"
}

func sleepCtx(ctx context.Context, d time.Duration) error {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// parseRetryAfter reads delay-seconds or an HTTP date.
func parseRetryAfter(v string, now time.Time) time.Duration {
	v = strings.TrimSpace(v)
	if v == "" {
		return 0
	}
	if n, err := strconv.Atoi(v); err == nil {
		return time.Duration(max(n, 0)) * time.Second
	}
	if t, err := http.ParseTime(v); err == nil {
		return max(t.Sub(now), 0)
	}
	return 0
}
