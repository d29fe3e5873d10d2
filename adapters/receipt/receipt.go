// Package receipt draws Quita's receipts (comprovantes) as PDF documents
// with go-pdf/fpdf and the Go fonts, embedded in the binary (TrueType, BSD
// licence; see docs/payments-and-ledger.md), so every character of
// Portuguese prints — "Padaria São João", "devolução" — on any machine.
// Times are shown in Brasília time from the tz database compiled into the
// binary (time/tzdata), so a server without /usr/share/zoneinfo still
// prints the right hour.
package receipt

import (
	"bytes"
	"fmt"
	"time"
	_ "time/tzdata" // America/Sao_Paulo wherever the binary runs

	"codeberg.org/go-pdf/fpdf"
	"golang.org/x/image/font/gofont/gobold"
	"golang.org/x/image/font/gofont/goregular"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// brasilia is the time zone every receipt shows times in: Pix payers and
// merchants read Brasília time whatever zone the server runs in.
var brasilia = mustLoadLocation("America/Sao_Paulo")

func mustLoadLocation(name string) *time.Location {
	loc, err := time.LoadLocation(name)
	if err != nil {
		panic(fmt.Sprintf("receipt: %s: %v (time/tzdata is linked in, so this cannot happen)", name, err))
	}
	return loc
}

// Renderer lays receipts out on one A4 page.
type Renderer struct{}

// New returns a receipt renderer.
func New() *Renderer { return &Renderer{} }

var _ ports.ReceiptRenderer = (*Renderer)(nil)

// The page's colours, those of the hosted checkout.
var (
	colText     = rgb{15, 31, 28}
	colMuted    = rgb{74, 90, 87}
	colBrand    = rgb{11, 110, 99}
	colLine     = rgb{217, 226, 224}
	colWarnText = rgb{122, 65, 0}
	colWarnFill = rgb{255, 240, 204}
)

type rgb struct{ r, g, b int }

const (
	fontFamily = "Go"
	pageMargin = 20.0
	labelWidth = 58.0
	lineHeight = 6.0
)

// RenderPDF implements ports.ReceiptRenderer.
func (*Renderer) RenderPDF(r ports.Receipt) ([]byte, error) {
	l := labelsFor(r.Locale)
	d := &doc{pdf: fpdf.New("P", "mm", "A4", ""), l: l}
	p := d.pdf
	p.AddUTF8FontFromBytes(fontFamily, "", goregular.TTF)
	p.AddUTF8FontFromBytes(fontFamily, "B", gobold.TTF)
	title := l.titles[r.Kind]
	if r.Method == domain.MethodPix {
		title = l.pixTitles[r.Kind]
	}
	// Fixed dates and sorted resources make the same receipt the same bytes.
	p.SetCatalogSort(true)
	p.SetCreationDate(r.IssuedAt)
	p.SetModificationDate(r.IssuedAt)
	p.SetTitle(title, true)
	p.SetAuthor("Quita", true)
	p.SetCreator("Quita", true)
	p.SetLang(string(r.Locale))
	p.SetMargins(pageMargin, pageMargin, pageMargin)
	p.SetAutoPageBreak(true, pageMargin)
	p.AddPage()

	d.header(r.Mode == domain.ModeTest)
	d.font("B", 18, colText)
	p.MultiCell(0, 9, title, "", "L", false)
	p.Ln(4)

	d.font("", 10, colMuted)
	p.CellFormat(0, 5, l.amount[r.Kind], "", 1, "L", false, 0, "")
	d.font("B", 26, colBrand)
	p.CellFormat(0, 13, domain.FormatMoney(r.Amount, r.Currency, r.Locale == domain.LocaleEN), "", 1, "L", false, 0, "")
	p.Ln(2)
	d.row(l.dateTime, d.when(r.At))
	d.row(l.method, methodName(l, r.Method))
	d.row(l.refundRoute, l.strategies[r.RefundStrategy])
	if r.Fee > 0 {
		d.row(l.fee, domain.FormatMoney(r.Fee, r.Currency, r.Locale == domain.LocaleEN))
	}

	d.section(l.to[r.Kind])
	d.party(r.To)
	d.section(l.from[r.Kind])
	d.party(r.From)

	d.section(l.details)
	d.row(l.description[r.Kind], r.Description)
	d.row(l.transaction, r.TransactionID)
	d.row(l.reference[r.Kind], r.ReferenceID)
	d.row(l.endToEnd, r.EndToEndID)
	d.row(l.originalEndToEnd, r.OriginalEndToEndID)
	d.row(l.txid, r.TxID)

	p.Ln(6)
	d.rule()
	p.Ln(3)
	d.font("", 8.5, colMuted)
	p.MultiCell(0, 4.5, fmt.Sprintf(l.issuedBy, d.when(r.IssuedAt))+" "+l.footer, "", "L", false)

	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		return nil, fmt.Errorf("receipt: render: %w", err)
	}
	return buf.Bytes(), nil
}

// doc is one receipt being drawn.
type doc struct {
	pdf *fpdf.Fpdf
	l   *labels
}

func (d *doc) font(style string, size float64, c rgb) {
	d.pdf.SetFont(fontFamily, style, size)
	d.pdf.SetTextColor(c.r, c.g, c.b)
}

// header draws the brand band and, for test receipts, the warning that no
// money moved, so a sandbox receipt cannot pass for a real one.
func (d *doc) header(test bool) {
	p := d.pdf
	w, _ := p.GetPageSize()
	p.SetFillColor(colBrand.r, colBrand.g, colBrand.b)
	p.Rect(0, 0, w, 24, "F")
	d.font("B", 20, rgb{255, 255, 255})
	p.Text(pageMargin, 15.5, "Quita")
	p.SetY(32)
	if test {
		p.SetFillColor(colWarnFill.r, colWarnFill.g, colWarnFill.b)
		d.font("B", 11, colWarnText)
		p.CellFormat(0, 9, d.l.testMode, "", 1, "C", true, 0, "")
		p.Ln(5)
	}
}

func (d *doc) rule() {
	p := d.pdf
	w, _ := p.GetPageSize()
	p.SetDrawColor(colLine.r, colLine.g, colLine.b)
	p.SetLineWidth(0.3)
	y := p.GetY()
	p.Line(pageMargin, y, w-pageMargin, y)
}

func (d *doc) section(title string) {
	p := d.pdf
	p.Ln(5)
	d.font("B", 12, colBrand)
	p.CellFormat(0, 7, title, "", 1, "L", false, 0, "")
	d.rule()
	p.Ln(2)
}

// row writes a label and its value; a value the receipt does not have is
// left out rather than shown empty.
func (d *doc) row(label, value string) {
	if value == "" || label == "" {
		return
	}
	p := d.pdf
	d.font("", 10, colMuted)
	p.CellFormat(labelWidth, lineHeight, label, "", 0, "L", false, 0, "")
	d.font("", 10.5, colText)
	p.MultiCell(0, lineHeight, printable(value), "", "L", false)
	p.Ln(0.8)
}

func (d *doc) party(pt ports.ReceiptParty) {
	name := pt.Name
	if name == "" {
		name = d.l.notKnown
	}
	d.row(d.l.name, name)
	label := d.l.document
	switch pt.DocumentKind {
	case domain.TaxIDCPF:
		label = "CPF"
	case domain.TaxIDCNPJ:
		label = "CNPJ"
	}
	d.row(label, pt.MaskedDocument)
	d.row(d.l.pixKey, pt.PixKey)
	d.row(d.l.institution, pt.Institution)
}

// when writes an instant in Brasília time with its UTC offset:
// "24/11/2026 às 19:32:05 (horário de Brasília, UTC-03:00)".
func (d *doc) when(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	b := t.In(brasilia)
	return b.Format(d.l.dateLayout) + " (" + d.l.timeZone + ", " + b.Format("UTC-07:00") + ")"
}

func methodName(l *labels, m domain.Method) string {
	if n, ok := l.methods[m]; ok {
		return n
	}
	return string(m)
}
