package app

import (
	"context"
	"sync"
	"time"

	"github.com/quitapix/quita/ports"
)

// URLCheckLimit bounds the webhook URL checks a service runs for
// requests. The zero value of a field takes its default.
type URLCheckLimit struct {
	// PerAccount is how many checks one account's requests run at once in
	// this process (default 8).
	PerAccount int
	// Wait is the longest a check past PerAccount waits for one to end
	// (default 1 s) before it is refused with a ThrottledError (429).
	Wait time.Duration
}

// urlChecks runs the webhook URL guard for callers' requests. The guard
// resolves the URL's host, a wait of up to 5 s on a name server the caller
// may run, so a check runs outside the request's admission place (a
// silent name server cannot pin the places every tenant's requests need)
// and at most PerAccount at once per account (one caller cannot pile
// lookups onto the resolver the whole process shares). The wait for a
// turn is outside the place too.
type urlChecks struct {
	guard ports.URLGuard
	limit *perAccountLimit
}

func newURLChecks(guard ports.URLGuard, l URLCheckLimit) *urlChecks {
	if l.PerAccount <= 0 {
		l.PerAccount = 8
	}
	if l.Wait <= 0 {
		l.Wait = time.Second
	}
	return &urlChecks{guard: guard, limit: &perAccountLimit{max: l.PerAccount, wait: l.Wait, accounts: map[string]*accountSlots{}}}
}

// check validates rawURL for the caller's mode (ports.URLGuard.CheckURL);
// a ThrottledError when the account's turns stay taken, or the admission
// limiter's refusal when no place is free again after the check.
func (c *urlChecks) check(ctx context.Context, caller Caller, rawURL string) error {
	return outsideAdmission(ctx, func() error {
		leave, err := c.limit.enter(ctx, caller.Account.ID)
		if err != nil {
			return err
		}
		defer leave()
		return c.guard.CheckURL(ctx, caller.Mode, rawURL)
	})
}

// perAccountLimit bounds how many of something each account has in
// progress at once; a caller past the bound waits a little for a turn.
type perAccountLimit struct {
	max  int
	wait time.Duration

	mu       sync.Mutex
	accounts map[string]*accountSlots // only accounts with one in progress
}

type accountSlots struct {
	n int
	// freed is closed (and replaced) when one ends: every waiter of the
	// account tries again.
	freed chan struct{}
}

// enter takes one of account's turns, waiting at most l.wait for one;
// leave gives it back. A ThrottledError when none freed in time.
func (l *perAccountLimit) enter(ctx context.Context, account string) (leave func(), err error) {
	var timeout *time.Timer
	for {
		l.mu.Lock()
		a := l.accounts[account]
		if a == nil {
			a = &accountSlots{freed: make(chan struct{})}
			l.accounts[account] = a
		}
		if a.n < l.max {
			a.n++
			l.mu.Unlock()
			if timeout != nil {
				timeout.Stop()
			}
			return func() { l.leave(account, a) }, nil
		}
		freed := a.freed
		l.mu.Unlock()
		if timeout == nil {
			timeout = time.NewTimer(l.wait)
		}
		select {
		case <-freed:
		case <-timeout.C:
			return nil, &ThrottledError{RetryAfter: time.Second}
		case <-ctx.Done():
			timeout.Stop()
			return nil, ctx.Err()
		}
	}
}

func (l *perAccountLimit) leave(account string, a *accountSlots) {
	l.mu.Lock()
	defer l.mu.Unlock()
	a.n--
	close(a.freed)
	a.freed = make(chan struct{})
	if a.n == 0 {
		delete(l.accounts, account)
	}
}
