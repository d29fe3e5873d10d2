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
	"strings"
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
	// rowGap is the space under each row.
	rowGap = 0.8
	// footerLine is the footer's line height.
	footerLine = 4.5
)

// A receipt is one A4 page whatever its records hold. Each field text from
// outside is cut to a number of characters (which bounds the work of
// drawing it) and then to a number of lines of its column (which bounds
// its height), with "…" where it was cut; the description takes the lines
// the page has left once everything else is placed, up to its characters.
// With every field at its bound the page holds them all (the room left for
// the description is then at least one line).
type fieldBound struct{ runes, lines int }

var (
	boundName        = fieldBound{140, 2} // domain.MaxPayerNameLen, the API Pix name
	boundDocument    = fieldBound{32, 1}  // masked: "**.222.333/0001-**"
	boundPixKey      = fieldBound{80, 1}  // masked; an e-mail key is at most 77
	boundInstitution = fieldBound{80, 1}
	boundID          = fieldBound{64, 1} // tx_, re_, po_ ids, end-to-end ids, txids
	boundDescription = 500               // domain.MaxDescriptionLen, the refund reason's
	// boundOwn is for Quita's own texts (a date, a method's name, an
	// amount), one line each.
	boundOwn = fieldBound{120, 1}
)

// ellipsis ends a field that was cut.
const ellipsis = "…"

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
	d.row(l.dateTime, d.when(r.At), boundOwn)
	d.row(l.method, methodName(l, r.Method), boundOwn)
	d.row(l.refundRoute, l.strategies[r.RefundStrategy], boundOwn)
	if r.Fee > 0 {
		d.row(l.fee, domain.FormatMoney(r.Fee, r.Currency, r.Locale == domain.LocaleEN), boundOwn)
	}
	d.dueLines(r)

	d.section(l.to[r.Kind])
	d.party(r.To)
	d.section(l.from[r.Kind])
	d.party(r.From)

	d.section(l.details)
	ids := []struct{ label, value string }{
		{l.transaction, r.TransactionID},
		{l.reference[r.Kind], r.ReferenceID},
		{l.endToEnd, r.EndToEndID},
		{l.originalEndToEnd, r.OriginalEndToEndID},
		{l.txid, r.TxID},
	}
	footer := fmt.Sprintf(l.issuedBy, d.when(r.IssuedAt)) + " " + l.footer
	below := d.footerHeight(footer)
	for _, id := range ids {
		if id.label != "" && id.value != "" {
			below += float64(boundID.lines)*lineHeight + rowGap
		}
	}
	_, pageHeight := p.GetPageSize()
	room := pageHeight - pageMargin - p.GetY() - below
	d.row(l.description[r.Kind], r.Description, fieldBound{boundDescription, max(int((room-rowGap)/lineHeight), 1)})
	for _, id := range ids {
		d.row(id.label, id.value, boundID)
	}

	d.footer(footer)

	var buf bytes.Buffer
	if err := p.Output(&buf); err != nil {
		return nil, fmt.Errorf("receipt: render: %w", err)
	}
	return buf.Bytes(), nil
}

// dueLines print what a due-date charge's payment was made of: its due
// date, the original amount and each part that changed it (none for
// another payment).
func (d *doc) dueLines(r ports.Receipt) {
	b := r.Due
	if b == nil {
		return
	}
	en := r.Locale == domain.LocaleEN
	money := func(sign string, v int64) string { return sign + domain.FormatMoney(v, r.Currency, en) }
	d.row(d.l.dueDate, d.date(r.DueDate), boundOwn)
	d.row(d.l.original, money("", b.Original), boundOwn)
	for _, part := range []struct {
		label, sign string
		v           int64
	}{
		{d.l.abatement, "− ", b.Abatement}, {d.l.discount, "− ", b.Discount},
		{d.l.fine, "+ ", b.Fine}, {d.l.interest, "+ ", b.Interest},
	} {
		if part.v > 0 {
			d.row(part.label, money(part.sign, part.v), boundOwn)
		}
	}
}

// date writes a YYYY-MM-DD date in the receipt's language.
func (d *doc) date(iso string) string {
	t, err := time.Parse(time.DateOnly, iso)
	if err != nil {
		return iso
	}
	if d.l == &english {
		return t.Format("Jan 2, 2006")
	}
	return t.Format("02/01/2006")
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

// row writes a label and its value within bound; a value the receipt does
// not have is left out rather than shown empty.
func (d *doc) row(label, value string, bound fieldBound) {
	if value == "" || label == "" {
		return
	}
	p := d.pdf
	d.font("", 10, colMuted)
	p.CellFormat(labelWidth, lineHeight, label, "", 0, "L", false, 0, "")
	d.font("", 10.5, colText)
	p.MultiCell(0, lineHeight, d.fit(value, bound), "", "L", false)
	p.Ln(rowGap)
}

// valueWidth is the width of a row's value column.
func (d *doc) valueWidth() float64 {
	w, _ := d.pdf.GetPageSize()
	return w - 2*pageMargin - labelWidth
}

// fit is value made printable and cut to bound in the current font: at
// most bound.runes characters, then at most bound.lines lines of the
// value column, joined by line breaks so the cell draws exactly those
// lines.
func (d *doc) fit(value string, bound fieldBound) string {
	s, cut := clipRunes(value, bound.runes)
	s = printable(s)
	width := d.valueWidth()
	lines := d.pdf.SplitText(s, width)
	if len(lines) > bound.lines {
		lines, cut = lines[:bound.lines], true
	}
	if cut && len(lines) > 0 {
		last := []rune(strings.TrimRight(lines[len(lines)-1], " "))
		room := width - 2*d.pdf.GetCellMargin()
		for len(last) > 0 && d.pdf.GetStringWidth(string(last)+ellipsis) > room {
			last = last[:len(last)-1]
		}
		lines[len(lines)-1] = string(last) + ellipsis
	}
	return strings.Join(lines, "\n")
}

// clipRunes is s cut to at most n characters, reading no further than
// that, and whether anything was cut.
func clipRunes(s string, n int) (string, bool) {
	i := 0
	for k := range s {
		if i == n {
			return s[:k], true
		}
		i++
	}
	return s, false
}

func (d *doc) party(pt ports.ReceiptParty) {
	name := pt.Name
	if name == "" {
		name = d.l.notKnown
	}
	d.row(d.l.name, name, boundName)
	label := d.l.document
	switch pt.DocumentKind {
	case domain.TaxIDCPF:
		label = "CPF"
	case domain.TaxIDCNPJ:
		label = "CNPJ"
	}
	d.row(label, pt.MaskedDocument, boundDocument)
	d.row(d.l.pixKey, pt.PixKey, boundPixKey)
	d.row(d.l.institution, pt.Institution, boundInstitution)
}

// The footer: a rule, then Quita's note in small type.
const (
	footerFont  = 8.5
	footerAbove = 6.0 // space between the last row and the rule
	footerBelow = 3.0 // between the rule and the note
)

func (d *doc) footer(text string) {
	p := d.pdf
	p.Ln(footerAbove)
	d.rule()
	p.Ln(footerBelow)
	d.font("", footerFont, colMuted)
	p.MultiCell(0, footerLine, text, "", "L", false)
}

// footerHeight is the height footer(text) takes. It leaves the footer's
// font set; every row sets its own.
func (d *doc) footerHeight(text string) float64 {
	d.font("", footerFont, colMuted)
	w, _ := d.pdf.GetPageSize()
	n := len(d.pdf.SplitText(text, w-2*pageMargin))
	return footerAbove + footerBelow + float64(n)*footerLine
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
