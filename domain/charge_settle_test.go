package domain_test

import (
	"errors"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestSettlePix(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name        string
		lock        string
		payer       string
		amount      int64
		want        domain.SettlementOutcome
		wantStatus  domain.TxStatus
		wantPublic  domain.Status
		wantFees    domain.Fees
		wantReturn  domain.ReturnState
		wantRefund  int64
		wantSettled bool
	}{
		{"no lock, payer disclosed", "", chargeCPF2, chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"no lock, payer undisclosed", "", "", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, same CPF formatted by the bank", chargeCPF, "529.982.247-25", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, same alphanumeric CNPJ in lower case", chargeCNPJ, "12.abc.345/01de-35", chargeAmount,
			domain.OutcomePaid, domain.TxPaid, domain.StatusPaid, domain.Fees{Provider: 50, Platform: 49}, domain.ReturnNone, 0, true},
		{"lock, another document", chargeCPF, chargeCPF2, chargeAmount,
			domain.OutcomePayerMismatch, domain.TxProcessing, domain.StatusProcessing, domain.Fees{}, domain.ReturnRequested, chargeAmount, true},
		{"lock, CNPJ paying for a CPF", chargeCPF, "11444777000161", chargeAmount,
			domain.OutcomePayerMismatch, domain.TxProcessing, domain.StatusProcessing, domain.Fees{}, domain.ReturnRequested, chargeAmount, true},
		{"lock, bank did not disclose the payer", chargeCPF, "", chargeAmount,
			domain.OutcomeHeldForReview, domain.TxProcessing, domain.StatusProcessing, domain.Fees{}, domain.ReturnNone, 0, true},
		{"underpaid", "", chargeCPF, chargeAmount - 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
		{"overpaid", "", chargeCPF, chargeAmount + 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
		{"underpaid under a lock by another payer", chargeCPF, chargeCPF2, 1,
			domain.OutcomeUnderpaid, domain.TxWaitingPayment, domain.StatusPending, domain.Fees{}, domain.ReturnNone, 0, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeOpen(t, tt.lock)
			p := chargePayment(tt.payer)
			p.Amount = tt.amount
			got, err := c.SettlePix(p, chargePixFees)
			if err != nil || got != tt.want {
				t.Fatalf("SettlePix = %q, %v; want %q", got, err, tt.want)
			}
			if c.Status() != tt.wantStatus || c.Status().Public() != tt.wantPublic {
				t.Errorf("status = %s (%s), want %s (%s)", c.Status(), c.Status().Public(), tt.wantStatus, tt.wantPublic)
			}
			if c.Fees() != tt.wantFees {
				t.Errorf("fees = %+v, want %+v (only a credited payment is charged)", c.Fees(), tt.wantFees)
			}
			s := c.Snapshot()
			if s.ReturnState != tt.wantReturn || s.RefundedAmount != tt.wantRefund {
				t.Errorf("return %q refunded %d, want %q %d", s.ReturnState, s.RefundedAmount, tt.wantReturn, tt.wantRefund)
			}
			st := c.Settlement()
			if !tt.wantSettled {
				if st != nil {
					t.Errorf("settlement = %+v, want none", st)
				}
				return
			}
			if st == nil {
				t.Fatal("no settlement recorded")
			}
			if !st.PaidAt.Equal(p.PaidAt) || st.PaidAt.Location() != time.UTC {
				t.Errorf("paid at %v, want %v in UTC", st.PaidAt, p.PaidAt)
			}
			st.PaidAt = time.Time{}
			want := domain.Settlement{
				EndToEndID: chargeE2E, Amount: chargeAmount, PaidWith: domain.MethodPix,
				PayerTaxID: domain.NormalizeTaxID(tt.payer), PayerName: "Payer Name",
			}
			if *st != want {
				t.Errorf("settlement = %+v, want %+v", *st, want)
			}
			if !s.UpdatedAt.Equal(p.PaidAt) {
				t.Errorf("updated_at = %v, want the payment time %v", s.UpdatedAt, p.PaidAt)
			}
		})
	}
}

// A Pix payment on a charge still in PENDING (public "pending" too) follows
// the same payer-lock rows as one in WAITING_PAYMENT.
func TestSettlePixFromPending(t *testing.T) {
	t.Parallel()
	tests := []struct {
		name, lock, payer string
		want              domain.SettlementOutcome
		wantStatus        domain.TxStatus
	}{
		{"no lock", "", chargeCPF, domain.OutcomePaid, domain.TxPaid},
		{"lock matched", chargeCPF, chargeCPF, domain.OutcomePaid, domain.TxPaid},
		{"lock mismatched", chargeCPF, chargeCPF2, domain.OutcomePayerMismatch, domain.TxProcessing},
		{"lock undisclosed", chargeCPF, "", domain.OutcomeHeldForReview, domain.TxProcessing},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeNew(t, func(p *domain.NewChargeParams) {
				if tt.lock != "" {
					p.ExpectedPayer, p.Customer.Name = tt.lock, "Maria"
				}
			})
			got, err := c.SettlePix(chargePayment(tt.payer), chargePixFees)
			if err != nil || got != tt.want || c.Status() != tt.wantStatus {
				t.Errorf("SettlePix = %q, %v, status %s; want %q, nil, %s", got, err, c.Status(), tt.want, tt.wantStatus)
			}
		})
	}
}

func TestSettlePixIsIdempotentPerEndToEndID(t *testing.T) {
	t.Parallel()
	for _, lock := range []string{"", chargeCPF} {
		t.Run("lock="+lock, func(t *testing.T) {
			t.Parallel()
			c := chargeOpen(t, lock)
			first, err := c.SettlePix(chargePayment(chargeCPF2), chargePixFees)
			if err != nil {
				t.Fatalf("first SettlePix: %v", err)
			}
			before := c.Snapshot()

			replay := chargePayment(chargeCPF2)
			replay.PaidAt = replay.PaidAt.Add(time.Hour) // even past expiry
			got, err := c.SettlePix(replay, domain.FeeSchedule{Provider: domain.Fee{BPS: 9999}})
			if err != nil || got != domain.OutcomeDuplicate {
				t.Fatalf("replay = %q, %v; want %q", got, err, domain.OutcomeDuplicate)
			}
			after := c.Snapshot()
			if after.Status != before.Status || after.Fees != before.Fees || !after.UpdatedAt.Equal(before.UpdatedAt) || *after.Settlement != *before.Settlement {
				t.Errorf("replay of a %q payment changed the charge: %+v → %+v", first, before, after)
			}

			other := chargePayment(chargeCPF2)
			other.EndToEndID = chargeE2E[:len(chargeE2E)-1] + "z"
			if _, err := c.SettlePix(other, chargePixFees); !errors.Is(err, domain.ErrChargeNotPayable) {
				t.Errorf("second, different payment = %v, want ErrChargeNotPayable", err)
			}
		})
	}
}

func TestSettlePixRejects(t *testing.T) {
	t.Parallel()
	expiry := chargeT0.Add(time.Hour)
	tests := []struct {
		name    string
		status  domain.TxStatus
		edit    func(*domain.PixPayment)
		wantErr error
	}{
		{"no end-to-end id", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.EndToEndID = "" }, domain.ErrValidation},
		{"zero amount", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.Amount = 0 }, domain.ErrValidation},
		{"negative amount", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.Amount = -chargeAmount }, domain.ErrValidation},
		{"no payment time", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = time.Time{} }, domain.ErrValidation},
		{"paid exactly at expiry", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = expiry }, domain.ErrChargeExpired},
		{"paid after expiry", domain.TxWaitingPayment, func(p *domain.PixPayment) { p.PaidAt = expiry.Add(time.Second) }, domain.ErrChargeExpired},
		{"already expired", domain.TxExpired, nil, domain.ErrChargeNotPayable},
		{"cancelled", domain.TxCancelled, nil, domain.ErrChargeNotPayable},
		{"refused", domain.TxRefused, nil, domain.ErrChargeNotPayable},
		{"held for review", domain.TxProcessing, nil, domain.ErrChargeNotPayable},
		{"paid by another payment", domain.TxPaid, nil, domain.ErrChargeNotPayable},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			t.Parallel()
			c := chargeInStatus(tt.status)
			p := chargePayment(chargeCPF)
			if tt.edit != nil {
				tt.edit(&p)
			}
			got, err := c.SettlePix(p, chargePixFees)
			if got != "" || !errors.Is(err, tt.wantErr) {
				t.Errorf("SettlePix = %q, %v; want %v", got, err, tt.wantErr)
			}
			if c.Status() != tt.status || c.Settlement() != nil || (c.Fees() != domain.Fees{}) {
				t.Errorf("rejected payment changed the charge: status %s settlement %v fees %+v", c.Status(), c.Settlement(), c.Fees())
			}
		})
	}
}

// A mismatched charge is held (PROCESSING) while its return is owed and
// reads REFUNDED only once the payer's bank confirmed the return; a return
// refused on every attempt leaves it held, never REFUNDED.
func TestConfirmAndFailReturn(t *testing.T) {
	t.Parallel()
	c := chargeOpen(t, chargeCPF)
	if err := c.ConfirmReturn(chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("ConfirmReturn before a mismatch = %v, want ErrInvalidTransition", err)
	}
	if _, err := c.SettlePix(chargePayment(chargeCPF2), chargePixFees); err != nil {
		t.Fatal(err)
	}
	if e2e, amount, reason, ok := c.OwedReturn(); !ok || e2e != chargePayment("").EndToEndID || amount != chargeAmount ||
		reason != domain.ReturnForPayerMismatch {
		t.Errorf("OwedReturn = %q %d %q %v", e2e, amount, reason, ok)
	}
	if err := c.Transition(domain.TxPaid, domain.MethodPix, nil, "", chargeT0); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("a charge owing its payment back moved to PAID: %v", err)
	}
	failed := domain.UnmarshalChargeFromStorage(c.Snapshot())
	at := chargeT0.Add(20 * time.Minute)
	if err := c.ConfirmReturn(at); err != nil {
		t.Fatalf("ConfirmReturn: %v", err)
	}
	if c.ReturnState() != domain.ReturnDone || !c.Snapshot().UpdatedAt.Equal(at) || c.Status() != domain.TxRefunded {
		t.Errorf("return state %q status %s updated %v, want done, REFUNDED at %v", c.ReturnState(), c.Status(),
			c.Snapshot().UpdatedAt, at)
	}
	if _, _, _, ok := c.OwedReturn(); ok {
		t.Error("a confirmed return is still owed")
	}
	if err := c.ConfirmReturn(at); err != nil || c.Status() != domain.TxRefunded {
		t.Errorf("second ConfirmReturn = %v, status %s", err, c.Status())
	}

	if err := failed.FailReturn(at); err != nil {
		t.Fatalf("FailReturn: %v", err)
	}
	if failed.ReturnState() != domain.ReturnFailed || failed.Status() != domain.TxProcessing || failed.Credited() {
		t.Errorf("after FailReturn: state %q status %s credited %v", failed.ReturnState(), failed.Status(), failed.Credited())
	}
	if err := failed.ConfirmReturn(at); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("ConfirmReturn after FailReturn = %v", err)
	}

	paid := chargeOpen(t, "")
	if _, err := paid.SettlePix(chargePayment(chargeCPF), chargePixFees); err != nil {
		t.Fatal(err)
	}
	if err := paid.ConfirmReturn(at); !errors.Is(err, domain.ErrInvalidTransition) || paid.ReturnState() != domain.ReturnNone {
		t.Errorf("ConfirmReturn on a paid charge = %v, state %q", err, paid.ReturnState())
	}
	if err := paid.FailReturn(at); !errors.Is(err, domain.ErrInvalidTransition) {
		t.Errorf("FailReturn on a paid charge = %v", err)
	}
}
