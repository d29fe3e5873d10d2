package dashboard

import (
	"errors"
	"mime"
	"net/http"
	"strings"

	"github.com/gorilla/mux"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// receipt downloads a credited charge's receipt (comprovante) in the
// page's language.
func (c *Controller) receipt(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	raw, err := chargeID(r)
	if err != nil {
		c.fail(w, r, err)
		return
	}
	doc, err := c.d.Receipts.PaymentReceipt(r.Context(), s.caller, raw, locale(r))
	c.download(w, r, doc, err)
}

// refundReceipt downloads a confirmed refund's receipt (comprovante de
// devolução).
func (c *Controller) refundReceipt(w http.ResponseWriter, r *http.Request) {
	s := sessionOf(r.Context())
	raw, err := chargeID(r)
	refundRaw := strings.TrimPrefix(mux.Vars(r)["refund"], domain.PrefixRefund)
	if err == nil && !domain.ValidRawID(refundRaw) {
		err = ports.ErrNotFound
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	doc, err := c.d.Receipts.RefundReceipt(r.Context(), s.caller, raw, refundRaw, locale(r))
	c.download(w, r, doc, err)
}

func locale(r *http.Request) domain.Locale {
	if langOf(r) == langEN {
		return domain.LocaleEN
	}
	return domain.LocalePtBR
}

func (c *Controller) download(w http.ResponseWriter, r *http.Request, doc app.Document, err error) {
	if errors.Is(err, app.ErrReceiptUnavailable) {
		c.errorPage(w, r, http.StatusUnprocessableEntity, "err_receipt")
		return
	}
	if errors.Is(err, app.ErrReceiptsBusy) {
		w.Header().Set("Retry-After", "1")
		c.errorPage(w, r, http.StatusServiceUnavailable, "err_receipts_busy")
		return
	}
	if err != nil {
		c.fail(w, r, err)
		return
	}
	h := w.Header()
	securityHeaders(h)
	h.Set("Content-Type", doc.ContentType)
	h.Set("Content-Disposition", mime.FormatMediaType("attachment", map[string]string{"filename": doc.Filename}))
	h.Set("Cache-Control", "no-store")
	_, _ = w.Write(doc.Body)
}

// ---- refunds ----

type refundsData struct {
	Refunds []domain.Refund
	PrevURL string
	NextURL string
}

func (c *Controller) refunds(w http.ResponseWriter, r *http.Request, s *session) error {
	off := pageOffset(r)
	rs, more, err := c.d.Reads.Refunds(r.Context(), s.caller, pageSize, off)
	if err != nil {
		return err
	}
	d := refundsData{Refunds: rs}
	d.PrevURL, d.NextURL = offsetLinks(modeBase(s)+"/refunds", off, more)
	return c.show(w, r, s, "refunds", d)
}

// pageOffset reads ?offset= (0 when absent or malformed, at most 10000).
func pageOffset(r *http.Request) int {
	n, ok := parseInt(r.URL.Query().Get("offset"))
	if !ok || n < 0 || n > 10000 {
		return 0
	}
	return int(n)
}

func offsetLinks(base string, off int, more bool) (prev, next string) {
	if off > 0 {
		prev = base + "?offset=" + formatInt(int64(max(off-pageSize, 0)))
	}
	if more {
		next = base + "?offset=" + formatInt(int64(off+pageSize))
	}
	return prev, next
}
