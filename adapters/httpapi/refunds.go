package httpapi

import (
	"fmt"
	"net/http"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

type refundRequest struct {
	IdempotencyKey  string `json:"idempotencyKey"`
	Amount          *int64 `json:"amount"`
	Reason          string `json:"reason"`
	Strategy        string `json:"strategy"`
	PassFeeToTenant bool   `json:"passFeeToTenant"`
	DestinationKey  string `json:"destinationKey"`
	// ReverseSplits, on a split payment, says what each split gives back;
	// absent, the splits give back in proportion.
	ReverseSplits *[]reverseSplitJSON `json:"reverseSplits"`
}

type reverseSplitJSON struct {
	Account string `json:"account"`
	Amount  int64  `json:"amount"`
}

// reverseSplits checks a refund's reverseSplits: nil when absent (the
// proportional rule), at most domain.MaxSplits entries of an acct_ id and
// a non-negative amount. Whether they fit the payment's splits is the
// refund's own check (split_reversal_invalid).
func reverseSplits(in *[]reverseSplitJSON) ([]domain.SplitReversal, error) {
	if in == nil {
		return nil, nil
	}
	if len(*in) > domain.MaxSplits {
		return nil, badRequest("reverseSplits", "parameter_invalid", fmt.Sprintf("reverseSplits takes at most %d entries", domain.MaxSplits))
	}
	out := make([]domain.SplitReversal, 0, len(*in))
	for i, r := range *in {
		if _, ok := domain.ParseAccountID(r.Account); !ok {
			return nil, badRequest(fmt.Sprintf("reverseSplits[%d].account", i), "parameter_invalid", "account must be a sub-account id (acct_...)")
		}
		if r.Amount < 0 {
			return nil, badRequest(fmt.Sprintf("reverseSplits[%d].amount", i), "parameter_invalid", "amount must be an integer of at least 0")
		}
		out = append(out, domain.SplitReversal(r))
	}
	return out, nil
}

// refundJSON is the refund object: the spec's fields, then where the
// money went — strategy (null for a card refund), the destination key
// masked (null for a devolution and for a cashout to the payer's own
// document) and its type — and the Pix-out fee the merchant paid.
type refundJSON struct {
	ID                 string              `json:"id"`
	TransactionID      string              `json:"transactionId"`
	Amount             int64               `json:"amount"`
	Currency           domain.Currency     `json:"currency"`
	Status             domain.RefundStatus `json:"status"`
	Reason             string              `json:"reason"`
	CreatedAt          domain.Timestamp    `json:"createdAt"`
	Strategy           *string             `json:"strategy"`
	DestinationKey     *string             `json:"destinationKey"`
	DestinationKeyType *string             `json:"destinationKeyType"`
	Fee                int64               `json:"fee"`
}

func refundBody(rf domain.Refund) refundJSON {
	out := refundJSON{ID: domain.PrefixRefund + rf.ID, TransactionID: domain.PrefixTransaction + rf.ChargeID, Amount: rf.Amount,
		Currency: rf.Currency, Status: rf.Status, Reason: rf.Reason, CreatedAt: domain.Timestamp(rf.CreatedAt),
		Strategy: optStr(string(rf.Strategy)), Fee: rf.Fee}
	if d, ok := rf.Destination(); ok {
		out.DestinationKey, out.DestinationKeyType = optStr(d.Key), optStr(string(d.Type))
	}
	return out
}

func (c *PaymentsController) refund(w http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	// Another account's payment is 404 before any body is looked at.
	if _, err := c.payments.Charges().Get(r.Context(), caller, raw); err != nil {
		return nil, err
	}
	var req refundRequest
	idem, err := readKeyedJSON(w, r, &req)
	if err != nil {
		return nil, err
	}
	if req.Amount != nil && *req.Amount <= 0 {
		return nil, badRequest("amount", "parameter_invalid", "amount must be a positive integer")
	}
	if len([]rune(req.Reason)) > 500 {
		return nil, badRequest("reason", "parameter_invalid", "reason must be at most 500 characters")
	}
	if domain.HasTextControl(req.Reason, true) {
		return nil, badRequest("reason", "parameter_invalid",
			"reason must not contain control characters other than tabs and line breaks, nor bidirectional formatting characters")
	}
	strategy := domain.RefundStrategy(req.Strategy)
	if strategy != "" && strategy != domain.StrategyDevolution && strategy != domain.StrategyCashout {
		return nil, badRequest("strategy", "parameter_invalid", "strategy must be devolution or cashout")
	}
	rs, err := reverseSplits(req.ReverseSplits)
	if err != nil {
		return nil, err
	}
	in := app.RefundInput{Amount: req.Amount, Reason: req.Reason, Strategy: strategy, PassFeeToTenant: req.PassFeeToTenant,
		DestinationKey: req.DestinationKey, ReverseSplits: rs}
	return c.payments.Refund(r.Context(), caller, raw, in, idem, func(rf domain.Refund) (app.Response, error) {
		return created(refundBody(rf))
	})
}

func (c *PaymentsController) refunds(_ http.ResponseWriter, r *http.Request, caller app.Caller, raw string) (any, error) {
	rs, err := c.payments.ListRefunds(r.Context(), caller, raw)
	if err != nil {
		return nil, err
	}
	out := struct {
		Data []refundJSON `json:"data"`
	}{Data: make([]refundJSON, 0, len(rs))}
	for _, rf := range rs {
		out.Data = append(out.Data, refundBody(rf))
	}
	return out, nil
}
