package sandbox_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/quitapix/quita/adapters/acquirer/sandbox"
	"github.com/quitapix/quita/internal/testkit"
	"github.com/quitapix/quita/ports"
)

// Issue 11, item 17: the returns the sandbox keeps are bounded; the
// oldest go first and a retried id is neither stored twice nor refused.
func TestReturnsAreBounded(t *testing.T) {
	t.Parallel()
	a := sandbox.New(sandbox.Config{MaxReturns: 3}, testkit.NewClock(time.Date(2026, 11, 24, 12, 0, 0, 0, time.UTC)))
	ctx := context.Background()
	ret := func(i int) {
		t.Helper()
		req := ports.ReturnPixRequest{ReturnID: fmt.Sprintf("ret%d", i), EndToEndID: "E99999999202611241200abcdefghijk", Amount: 100}
		if r, err := a.ReturnPix(ctx, req); err != nil || r.ProviderRef != req.ReturnID {
			t.Fatalf("return %d: %+v, %v", i, r, err)
		}
	}
	for i := range 1000 {
		ret(i)
	}
	ret(999) // a retry of a kept id
	got := a.Returns()
	if len(got) != 3 || got[0].ReturnID != "ret997" || got[2].ReturnID != "ret999" {
		t.Fatalf("kept %+v", got)
	}
}
