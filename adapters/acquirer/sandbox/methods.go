package sandbox

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"math/big"
	"strings"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var (
	_ ports.MethodAcquirer = (*Acquirer)(nil)
	_ ports.RefundAcquirer = (*Acquirer)(nil)
)

// Sandbox method constants: a bank code no real bank uses for boletos, and
// the Multibanco entity of the sandbox.
const (
	boletoBank       = "999"
	multibancoEntity = "21999"
	boletoValidity   = 3 * 24 * time.Hour
	multibancoValid  = 3 * 24 * time.Hour
)

// usdtPerUnit is the sandbox's fixed quote of one major unit of a fiat
// currency in USDT, in millionths (no float touches an amount).
var usdtPerUnit = map[domain.Currency]int64{"USD": 1_000_000, "EUR": 1_080_000, "BRL": 180_000, "GBP": 1_270_000}

var cryptoTickers = map[domain.Currency]bool{"USDT": true, "USDC": true, "ETH": true, "BTC": true, "DAI": true}

// digitsOf derives n decimal digits from seed, deterministically.
func digitsOf(seed string, n int) string {
	sum := sha256.Sum256([]byte(seed))
	v := new(big.Int).SetBytes(sum[:]).String()
	for len(v) < n {
		v += v
	}
	return v[len(v)-n:]
}

// CreatePaymentMethods implements ports.MethodAcquirer with realistic,
// checksum-valid data derived from the charge id (so a retry answers the
// same).
func (a *Acquirer) CreatePaymentMethods(ctx context.Context, req ports.CreateMethodsRequest) (domain.MethodDetails, error) {
	if err := a.call(ctx); err != nil {
		return domain.MethodDetails{}, err
	}
	var d domain.MethodDetails
	now := a.now().UTC()
	for _, m := range req.Methods {
		switch m {
		case domain.MethodBoleto:
			due := now.Add(boletoValidity)
			b, err := domain.NewBoleto(boletoBank, req.Amount, due, digitsOf("boleto:"+req.ChargeID, 25))
			if err != nil {
				return d, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
			}
			d.BoletoBarcode, d.BoletoLine = b.Barcode, b.Line
			// The sandbox bank prints no boleto PDF, so boletoPdfUrl stays null
			// rather than pointing at a page nobody serves.
			d.BoletoExpiresAt = due.Truncate(time.Second)
		case domain.MethodMultibanco:
			ref, err := domain.MultibancoReference(multibancoEntity, digitsOf("mb:"+req.ChargeID, 7), req.Amount)
			if err != nil {
				return d, fmt.Errorf("%w: %v", ports.ErrAcquirerRejected, err)
			}
			d.MBEntity, d.MBReference, d.MBExpiresAt = multibancoEntity, ref, now.Add(multibancoValid).Truncate(time.Second)
		case domain.MethodCreditCard:
			d.CardRedirectURL = strings.TrimRight(a.cfg.CheckoutBase, "/") + "/" + req.ChargeID + "/card"
		case domain.MethodCrypto:
			sum := sha256.Sum256([]byte("crypto:" + req.ChargeID))
			d.CryptoAddress = "0x" + hex.EncodeToString(sum[:20])
			d.CryptoNetwork = "ETHEREUM"
			d.CryptoCurrency, d.CryptoAmount = cryptoQuote(req.Currency, req.Amount)
		}
	}
	return d, nil
}

// cryptoQuote prices amount (minor units, two decimals) in a crypto ticker.
func cryptoQuote(cur domain.Currency, amount int64) (string, string) {
	if cryptoTickers[cur] {
		return string(cur), domain.FormatDecimal(amount)
	}
	rate, ok := usdtPerUnit[cur]
	if !ok {
		rate = 1_000_000
	}
	// amount/100 major units × rate/1e6 USDT, to 6 decimals, rounded half up.
	micro := (amount*rate + 50) / 100
	return "USDT", fmt.Sprintf("%d.%06d", micro/1_000_000, micro%1_000_000)
}

// Refund implements ports.RefundAcquirer: the sandbox accepts every refund
// of a Pix or card payment at once. A Pix devolution is a return of the
// original Pix (ReturnPix); a Pix cashout is a new Pix out through SendPix,
// as a payout is; the refund id is the reference of the others.
func (a *Acquirer) Refund(ctx context.Context, req ports.RefundRequest) (string, error) {
	if err := a.call(ctx); err != nil {
		return "", err
	}
	if !req.Method.Refundable() {
		return "", fmt.Errorf("%w: %s cannot be refunded", ports.ErrAcquirerRejected, req.Method)
	}
	if req.Method == domain.MethodPix && req.Strategy == domain.StrategyCashout {
		return a.cashout(req)
	}
	if req.Method == domain.MethodPix && req.Strategy == domain.StrategyDevolution {
		if _, err := a.returnPix(ports.ReturnPixRequest{Scope: req.Scope, ChargeID: req.ChargeID,
			EndToEndID: req.EndToEndID, ReturnID: "D" + req.RefundID, Amount: req.Amount, Reason: "refund"}); err != nil {
			return "", err
		}
	}
	return "sbx_" + req.RefundID, nil
}

// RefundStatus implements ports.RefundAcquirer: sandbox refunds complete
// on the first status check after they start (a cashout whose Pix the
// sandbox failed, FAILED).
func (a *Acquirer) RefundStatus(ctx context.Context, ref string) (string, error) {
	if err := a.call(ctx); err != nil {
		return "", err
	}
	if st, ok := cashoutState(ref); ok {
		return string(st), nil
	}
	return string(domain.RefundRefunded), nil
}

// ChargeStatus implements ports.RefundAcquirer.
func (a *Acquirer) ChargeStatus(ctx context.Context, ref string) (ports.ProviderStatus, error) {
	if err := a.call(ctx); err != nil {
		return ports.ProviderStatus{}, err
	}
	return ports.ProviderStatus{Status: "ATIVA", RawResponse: map[string]any{
		"provider": Name, "txid": ref, "status": "ATIVA", "checkedAt": a.now().UTC().Format(time.RFC3339),
	}}, nil
}
