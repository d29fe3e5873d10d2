package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

// An open due-date charge's overdue notice is due at the end of its due
// date in Brasília and is given once; a paid charge and an immediate one
// have none.
func TestOverdueNoticeIsGivenOnceAfterTheDueDate(t *testing.T) {
	t.Parallel()
	c := dueCharge(t)
	at, ok := c.OverdueNoticeAt()
	// Due 30 Nov 2026 (a Monday): overdue from 1 Dec 00:00 in Brasília.
	if want := time.Date(2026, 12, 1, 3, 0, 0, 0, time.UTC); !ok || !at.Equal(want) {
		t.Fatalf("OverdueNoticeAt = %v, %v; want %v", at, ok, want)
	}
	if c.Overdue(at.Add(-time.Nanosecond)) || !c.Overdue(at) {
		t.Errorf("Overdue just before and at %v: %v, %v; want false, true", at, c.Overdue(at.Add(-time.Nanosecond)), c.Overdue(at))
	}
	if err := c.MarkOverdue(at.Add(-time.Second)); !errors.Is(err, domain.ErrChargeNotOverdue) {
		t.Errorf("MarkOverdue before the end of the due date: %v", err)
	}
	if err := c.MarkOverdue(at); err != nil {
		t.Fatalf("MarkOverdue at %v: %v", at, err)
	}
	if _, ok := c.OverdueNoticeAt(); ok {
		t.Error("a marked charge still has a notice to give")
	}
	if err := c.MarkOverdue(at.Add(time.Hour)); !errors.Is(err, domain.ErrChargeNotOverdue) {
		t.Errorf("MarkOverdue twice: %v", err)
	}
	if !c.Overdue(at.Add(time.Hour)) {
		t.Error("a marked open charge is not overdue")
	}

	paid := paidDueCharge(t, 9_900, time.Date(2026, 11, 25, 2, 0, 0, 0, time.UTC), chargePixFees)
	if _, ok := paid.OverdueNoticeAt(); ok || paid.Overdue(at.Add(time.Hour)) {
		t.Error("a paid due-date charge has an overdue notice or reads overdue")
	}
	plain := chargeNew(t, nil)
	if _, ok := plain.OverdueAt(); ok || plain.MarkOverdue(at) == nil {
		t.Error("an immediate charge has an overdue time or can be marked")
	}
}
