package domain_test

import (
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// FuzzSubscriptionEvents applies a random order of events — the payer's
// answers, cancellations, cycles scheduled (twice, as two racing workers
// would try), debits paid, failed, expired or cancelled, amounts set,
// cycles skipped — to a subscription and its cycles, and checks after each
// that: a terminal subscription or cycle stays as it is; no cycle is ever
// scheduled twice and cycles are numbered 1, 2, 3… without a gap; no cycle
// has more retries than its policy allows, nor a retry past the policy's
// days; and the counts of the subscription agree with its cycles.
func FuzzSubscriptionEvents(f *testing.F) {
	f.Add([]byte{0, 5, 6, 0, 5, 7, 0, 7, 0, 7, 0, 7, 0, 5, 3, 8, 0})
	f.Add([]byte{0, 10, 5, 5, 11, 5, 4, 6, 1, 2})
	f.Add([]byte{1, 0, 5, 3})
	f.Add([]byte{2, 0, 5})
	f.Add([]byte{0, 5, 12, 5, 12, 9, 0, 6, 1, 5, 7, 1, 7, 1, 7, 1, 7, 1})
	f.Fuzz(func(t *testing.T, ops []byte) {
		if len(ops) > 400 {
			return
		}
		variable := len(ops) > 0 && ops[0]&0x80 != 0
		policy := domain.RetryThreeInSevenDays
		if len(ops) > 1 && ops[1]&0x80 != 0 {
			policy = domain.RetryNone
		}
		s := newSub(t, func(p *domain.NewSubscriptionParams) {
			p.EndDate = ymd(2029, 1, 31)
			p.RetryPolicy = policy
			if variable {
				p.Amount, p.Variable = nil, true
			}
		})
		attach(t, s)
		now := subT0
		var (
			cycles    []*domain.Cycle
			lastSched *domain.Cycle
			closed    = map[int]domain.CobRStatus{}
			terminal  domain.SubscriptionStatus
		)
		pick := func(b byte) *domain.Cycle {
			if len(cycles) == 0 {
				return nil
			}
			return cycles[int(b)%len(cycles)]
		}
		closeCycle := func(c *domain.Cycle) {
			if _, done := closed[c.Number()]; !done && !c.Status().Open() {
				closed[c.Number()] = c.Status()
				s.CycleClosed(c, now)
			}
		}
		for i, op := range ops {
			now = now.Add(time.Hour)
			arg := byte(i * 7)
			if i+1 < len(ops) {
				arg = ops[i+1]
			}
			switch op & 0x7f % 13 {
			case 0:
				_ = s.Authorize(now)
			case 1:
				_ = s.Reject(now)
			case 2:
				_ = s.ExpireAuthorization(s.AuthorizationExpiresAt())
			case 3, 4:
				by := domain.CancelledByMerchant
				if op&0x7f%13 == 4 {
					by = domain.CancelledByPayer
				}
				if s.Cancel(by, now) == nil {
					for _, c := range cycles {
						_ = c.Cancel(now)
						closeCycle(c)
					}
				}
			case 5:
				spec, err := s.NextCycleSpec(domain.BrasiliaDate(now), true)
				if err != nil {
					continue
				}
				c := cycleFor(t, s, spec)
				if err := s.CycleScheduled(c, now); err != nil {
					t.Fatalf("op %d: a cycle NextCycleSpec offered was refused: %v", i, err)
				}
				if len(cycles) > 0 && c.Number() != cycles[len(cycles)-1].Number()+1 && s.Cycles().Skipped == 0 {
					t.Fatalf("op %d: cycle %d after cycle %d", i, c.Number(), cycles[len(cycles)-1].Number())
				}
				cycles, lastSched = append(cycles, c), c
			case 12:
				if lastSched != nil {
					// A second worker's charge for a cycle already scheduled.
					dup := cycleFor(t, s, domain.CycleSpec{Cycle: lastSched.Number(), DueDate: lastSched.DueDate(), Amount: lastSched.Amount()})
					if err := s.CycleScheduled(dup, now); err == nil {
						t.Fatalf("op %d: cycle %d scheduled twice", i, dup.Number())
					}
				}
			case 6:
				if c := pick(arg); c != nil {
					_ = c.Paid("E", now)
					closeCycle(c)
				}
			case 7:
				if c := pick(arg); c != nil {
					retry, err := c.DebitFailed("AM04", now)
					if err == nil && retry {
						s.CycleChanged(c, now)
					}
					closeCycle(c)
				}
			case 8:
				if c := pick(arg); c != nil {
					_ = c.Cancel(now)
					closeCycle(c)
				}
			case 9:
				if c := pick(arg); c != nil {
					_ = c.Expire(now)
					closeCycle(c)
				}
			case 10:
				_ = s.SetNextAmount(int64(arg)+1, domain.BrasiliaDate(now), now)
			case 11:
				_ = s.SkipCycle(s.CycleDate(s.NextCycle()).AddDays(-1), now)
			}

			st := s.Status()
			if terminal != "" && st != terminal {
				t.Fatalf("op %d: terminal %s became %s", i, terminal, st)
			}
			if st.Terminal() {
				terminal = st
			}
			seen := map[int]bool{}
			open, paid, failed := 0, 0, 0
			for _, c := range cycles {
				if seen[c.Number()] {
					t.Fatalf("op %d: two charges for cycle %d", i, c.Number())
				}
				seen[c.Number()] = true
				if c.Retries() > c.Policy().MaxRetries() || len(c.Attempts()) > 1+c.Policy().MaxRetries() {
					t.Fatalf("op %d: cycle %d has %d retries under %s", i, c.Number(), c.Retries(), c.Policy())
				}
				for _, a := range c.Attempts() {
					if a.Kind == domain.AttemptRetry && a.Date.After(c.DueDate().AddDays(c.Policy().RetryDays())) {
						t.Fatalf("op %d: retry on %s, past %d days after %s", i, a.Date, c.Policy().RetryDays(), c.DueDate())
					}
				}
				if was, done := closed[c.Number()]; done && c.Status() != was {
					t.Fatalf("op %d: closed cycle %d went from %s to %s", i, c.Number(), was, c.Status())
				}
				switch c.Status() {
				case domain.CobRCreated, domain.CobRActive:
					open++
				case domain.CobRConcluded:
					paid++
				case domain.CobRRejected, domain.CobRExpired:
					failed++
				case domain.CobRCancelled:
				}
			}
			counts := s.Cycles()
			if counts.Open != open || counts.Paid != paid || counts.Failed != failed {
				t.Fatalf("op %d: counts %+v, cycles say open %d paid %d failed %d", i, counts, open, paid, failed)
			}
			if len(cycles)+counts.Skipped != s.NextCycle()-1 {
				t.Fatalf("op %d: %d cycles and %d skipped, next cycle %d", i, len(cycles), counts.Skipped, s.NextCycle())
			}
			if st == domain.SubscriptionCompleted && (counts.Open > 0 || !s.Done()) {
				t.Fatalf("op %d: completed with %d cycles open, done %v", i, counts.Open, s.Done())
			}
		}
	})
}
