package modes_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/acquirer/modes"
	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// Test-mode subscriptions run on the sandbox; a live provider without Pix
// Automático is not configured for them (never the sandbox).
func TestRouterRoutesRecurrences(t *testing.T) {
	t.Parallel()
	sb := sandbox.New(sandbox.Config{LocationHost: "pay.example.com/pix"}, testkit.NewClock(time.Date(2027, 1, 10, 12, 0, 0, 0, time.UTC)))
	sealer, _ := bcbpix.NewSealer(nil)
	live := bcbpix.New(noStore{}, sealer, bcbpix.Options{})
	r := &modes.Router{Test: sb, Live: live}
	ctx := context.Background()
	req := ports.CreateRecurrenceRequest{Key: "k", DebtorName: "Maria", DebtorTaxID: "52998224725", Contract: "C",
		StartDate: bizdays.MustDate(2027, 1, 31), Interval: domain.IntervalMonthly, Amount: 100, RetryPolicy: domain.RetryNone,
		Journey: domain.JourneyAuthorizationRequest}
	req.Scope = ports.Scope{AccountID: "acct_x", Mode: domain.ModeTest}
	if rec, err := r.CreateRecurrence(ctx, req); err != nil || rec.RecID == "" {
		t.Errorf("test mode: %+v %v", rec, err)
	}
	req.Scope.Mode = domain.ModeLive
	if _, isRecurring := any(live).(ports.RecurringAcquirer); !isRecurring {
		if _, err := r.CreateRecurrence(ctx, req); !errors.Is(err, ports.ErrAcquirerNotConfigured) {
			t.Errorf("live without the capability: %v", err)
		}
	}
}
