package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestAttachPix(t *testing.T) {
	t.Parallel()
	t.Run("opens the charge for payment", func(t *testing.T) {
		t.Parallel()
		c := chargeNew(t, nil)
		at := chargeT0.Add(time.Second)
		pixExpiry := chargeT0.Add(59 * time.Minute)
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode, TxID: chargePixTxID, ExpiresAt: pixExpiry}, "sandbox", "ref-1", at); err != nil {
			t.Fatalf("AttachPix: %v", err)
		}
		s := c.Snapshot()
		if s.Status != domain.TxWaitingPayment {
			t.Errorf("status = %s, want WAITING_PAYMENT", s.Status)
		}
		if s.Provider != "sandbox" || s.ProviderRef != "ref-1" || s.Pix == nil || s.Pix.BRCode != chargeBRCode {
			t.Errorf("provider %q ref %q pix %+v not recorded", s.Provider, s.ProviderRef, s.Pix)
		}
		if !c.ExpiresAt().Equal(pixExpiry) {
			t.Errorf("ExpiresAt = %v, want the acquirer's %v (authoritative)", c.ExpiresAt(), pixExpiry)
		}
		if !s.UpdatedAt.Equal(at) {
			t.Errorf("updated_at = %v, want %v", s.UpdatedAt, at)
		}
	})
	t.Run("keeps the charge expiry when the acquirer gives none", func(t *testing.T) {
		t.Parallel()
		c := chargeNew(t, nil)
		want := c.ExpiresAt()
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode}, "sandbox", "ref", chargeT0); err != nil {
			t.Fatalf("AttachPix: %v", err)
		}
		if !c.ExpiresAt().Equal(want) || !c.Pix().ExpiresAt.Equal(want) {
			t.Errorf("ExpiresAt = %v, pix %v; want %v", c.ExpiresAt(), c.Pix().ExpiresAt, want)
		}
	})
	t.Run("twice", func(t *testing.T) {
		t.Parallel()
		c := chargeOpen(t, "")
		err := c.AttachPix(domain.PixDetails{BRCode: "other"}, "sandbox", "ref-2", chargeT0)
		if !errors.Is(err, domain.ErrPixAlreadyAttached) {
			t.Errorf("second AttachPix = %v, want ErrPixAlreadyAttached", err)
		}
		if c.Pix().BRCode != chargeBRCode {
			t.Errorf("second AttachPix replaced the BR Code")
		}
	})
	t.Run("after refusal", func(t *testing.T) {
		t.Parallel()
		c := chargeInStatus(domain.TxRefused)
		if err := c.AttachPix(domain.PixDetails{BRCode: chargeBRCode}, "sandbox", "ref", chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
			t.Errorf("AttachPix on REFUSED = %v, want ErrInvalidTransition", err)
		}
		if c.Pix() != nil || c.Status() != domain.TxRefused {
			t.Errorf("refused charge changed: pix %v status %s", c.Pix(), c.Status())
		}
	})
}

func TestRefuse(t *testing.T) {
	t.Parallel()
	for _, from := range domain.TxStatuses {
		t.Run(string(from), func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(from)
			err := c.Refuse(chargeT0)
			if from == domain.TxPending {
				if err != nil || c.Status() != domain.TxRefused {
					t.Errorf("Refuse = %v, status %s; want nil, REFUSED", err, c.Status())
				}
				return
			}
			if !errors.Is(err, domain.ErrInvalidTransition) || c.Status() != from {
				t.Errorf("Refuse = %v, status %s; want ErrInvalidTransition, %s", err, c.Status(), from)
			}
		})
	}
}
