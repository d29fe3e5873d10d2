package client

import (
	"context"
	"net/http"
)

// TestHelpersService is /v1/test_helpers: it moves test-mode charges as
// the sandbox bank would. With a live key every helper is ErrNotFound.
type TestHelpersService struct{ c *Client }

// PayParams describe the sandbox payment of a charge.
type PayParams struct {
	// Amount paid; 0 pays the charge's amount. Any other amount leaves
	// the charge pending (Pix is exact-match) and returns the money.
	Amount int64 `json:"amount,omitempty"`
	// PayerDocument is the paying CPF/CNPJ. Under a payer lock a
	// different document makes the charge refunded and none makes it
	// processing (held for review).
	PayerDocument string `json:"payer_document,omitempty"`
	PayerName     string `json:"payer_name,omitempty"`
	// Date (YYYY-MM-DD) is a due-date charge's day of payment: Amount 0
	// pays the amount due that day. Empty: today.
	Date string `json:"date,omitempty"`
}

// PayCharge pays a pending test charge and returns it after settlement.
func (s *TestHelpersService) PayCharge(ctx context.Context, id string, p PayParams) (*Charge, error) {
	var out Charge
	r := request{method: http.MethodPost, path: "/test_helpers/charges/" + pathID(id) + "/pay", body: p, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// ExpireCharge expires a pending test charge now.
func (s *TestHelpersService) ExpireCharge(ctx context.Context, id string) (*Charge, error) {
	var out Charge
	r := request{method: http.MethodPost, path: "/test_helpers/charges/" + pathID(id) + "/expire", class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// FailRefund makes an open test refund FAILED (the money goes back to the
// wallet).
func (s *TestHelpersService) FailRefund(ctx context.Context, refundID string) (*Refund, error) {
	var out Refund
	r := request{method: http.MethodPost, path: "/test_helpers/refunds/" + pathID(refundID) + "/fail", class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// TransitionPayment moves a test payment to status, as its provider would
// (e.g. TxApproved with paidWith CREDIT_CARD, TxChargeback, TxRefused).
// paidWith may be empty.
func (s *TestHelpersService) TransitionPayment(ctx context.Context, id string, status TxStatus, paidWith string) (*Payment, error) {
	var out Payment
	body := map[string]string{"status": string(status)}
	if paidWith != "" {
		body["paidWith"] = paidWith
	}
	r := request{method: http.MethodPost, path: "/test_helpers/payments/" + pathID(id) + "/transition", body: body, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}

// MEDReturnParams describe a MED return: the payer's PSP taking money back
// from a paid test charge (Mecanismo Especial de Devolução).
type MEDReturnParams struct {
	// Amount taken back; 0 takes what the payment has left after its
	// refunds and earlier disputes.
	Amount int64 `json:"amount,omitempty"`
	// Reason is "fraud" or "operational".
	Reason string `json:"reason"`
}

// MEDReturn has the payer's PSP take money back from a paid test charge:
// the charge becomes disputed with a new Disputes entry and the wallet is
// debited (its debt grows by what it cannot cover). Each call is a new
// return, so it is retried only when the request was never sent.
func (s *TestHelpersService) MEDReturn(ctx context.Context, id string, p MEDReturnParams) (*Charge, error) {
	var out Charge
	r := request{method: http.MethodPost, path: "/test_helpers/charges/" + pathID(id) + "/med_return", body: p, class: notSentOnly}
	if _, err := s.c.do(ctx, r, &out); err != nil {
		return nil, err
	}
	return &out, nil
}
