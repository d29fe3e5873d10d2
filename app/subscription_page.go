package app

import (
	"context"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/domain/bizdays"
	"github.com/quitapix/quita/ports"
)

// SubscriptionPageView is the allowlist of a QR-journey subscription shown
// on its hosted page, where the payer scans the code: what the mandate
// authorises, never the payer's document nor anything private to the
// merchant.
type SubscriptionPageView struct {
	// RawID is the id already in the page's address.
	RawID        string
	MerchantName string
	Status       domain.SubscriptionStatus
	// Amount is each cycle's amount, 0 for a variable subscription (whose
	// cap is MaxAmount, 0 when none).
	Amount       int64
	MaxAmount    int64
	FirstPayment int64
	Interval     domain.Interval
	StartDate    bizdays.Date
	EndDate      bizdays.Date
	Contract     string
	Description  string
	// BRCode is the code to scan; "" for an authorization_request
	// subscription, which has no page.
	BRCode    string
	ExpiresAt time.Time
	TestMode  bool
}

// PageView reads the hosted page of a QR-journey subscription by raw id.
// ports.ErrNotFound for an unknown id and for a subscription whose payer
// authorises elsewhere (authorization_request).
func (s *SubscriptionService) PageView(ctx context.Context, rawID string) (SubscriptionPageView, error) {
	sub, err := s.GetPublic(ctx, rawID)
	if err != nil {
		return SubscriptionPageView{}, err
	}
	m := sub.Mandate()
	if !sub.Journey().QR() || m.BRCode == "" {
		return SubscriptionPageView{}, ports.ErrNotFound
	}
	acct, err := s.accounts.GetAccount(ctx, sub.AccountID())
	if err != nil {
		return SubscriptionPageView{}, err
	}
	name := acct.Name
	if name == "" {
		name = acct.MerchantName
	}
	return SubscriptionPageView{RawID: sub.ID(), MerchantName: name, Status: sub.Status(), Amount: sub.Amount(),
		MaxAmount: sub.MaxAmount(), FirstPayment: sub.FirstPayment(), Interval: sub.Interval(), StartDate: sub.StartDate(),
		EndDate: sub.EndDate(), Contract: sub.Contract(), Description: sub.Description(), BRCode: m.BRCode,
		ExpiresAt: sub.AuthorizationExpiresAt(), TestMode: sub.Mode() == domain.ModeTest}, nil
}

// QRCode is the code of a QR-journey subscription's hosted page, by raw
// id; ports.ErrNotFound when it has none.
func (s *SubscriptionService) QRCode(ctx context.Context, rawID string) (string, error) {
	sub, err := s.store.GetSubscriptionByID(ctx, rawID)
	if err != nil {
		return "", err
	}
	if code := sub.Mandate().BRCode; sub.Journey().QR() && code != "" {
		return code, nil
	}
	return "", ports.ErrNotFound
}
