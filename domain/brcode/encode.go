package brcode

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// formatAmount writes centavos with exactly two decimals, the form
// every payer app reads.
func formatAmount(c int64) string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// checkDisplay enforces what Encode's normalisation guarantees for
// tags 59 and 60: 1..max printable ASCII characters.
func checkDisplay(field, v string, max int) error {
	if v == "" {
		return malformed("tag %s is empty", field)
	}
	if len(v) > max {
		return malformed("tag %s is longer than %d characters", field, max)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return malformed("tag %s must be printable ASCII", field)
		}
	}
	return nil
}

// checkText rejects control characters and broken UTF-8, which some
// payer apps render as garbage or refuse outright.
func checkText(field, v string) error {
	if !utf8.ValidString(v) {
		return malformed("%s is not valid UTF-8", field)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return malformed("%s contains a control character", field)
		}
	}
	return nil
}

// asciiFold maps the Latin letters Brazilian names use to their unaccented
// form. Payer apps are not consistent about non-ASCII in tags 59 and 60, and
// the BCB profile asks for none.
var asciiFold = map[rune]string{
	'À': "A", 'Á': "A", 'Â': "A", 'Ã': "A", 'Ä': "A", 'Å': "A", 'Æ': "AE",
	'Ç': "C", 'È': "E", 'É': "E", 'Ê': "E", 'Ë': "E",
	'Ì': "I", 'Í': "I", 'Î': "I", 'Ï': "I", 'Ð': "D", 'Ñ': "N",
	'Ò': "O", 'Ó': "O", 'Ô': "O", 'Õ': "O", 'Ö': "O", 'Ø': "O",
	'Ù': "U", 'Ú': "U", 'Û': "U", 'Ü': "U", 'Ý': "Y", 'Þ': "TH", 'ß': "ss",
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'æ': "ae",
	'ç': "c", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ð': "d", 'ñ': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'þ': "th", 'ÿ': "y",
	'Œ': "OE", 'œ': "oe", 'Š': "S", 'š': "s", 'Ž': "Z", 'ž': "z", 'Ÿ': "Y",
	'ª': "a", 'º': "o",
}

// display turns a merchant-supplied name or city into what tags 59/60
// may carry: accents stripped, other non-ASCII and control characters
// dropped (a decomposed "e" + U+0301 keeps its "e"), truncated to max. It is
// the identity on values that already qualify, which keeps Parse and Encode
// in agreement.
func display(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		case asciiFold[r] != "":
			b.WriteString(asciiFold[r])
		}
		if b.Len() >= max {
			break
		}
	}
	out := b.String()
	if len(out) > max {
		out = out[:max]
	}
	return out
}

// Encode renders the canonical payload, CRC included: tags 00, 01, 26, 52,
// 53, 54, 58, 59, 60, 62, then Extra, then 63. The merchant name and city
// are normalised (see Code); every other field must already be valid, and
// errors wrap ErrMalformed. Encode does not modify b.
func (b *Code) Encode() (string, error) {
	if b == nil {
		return "", malformed("nil BR Code")
	}
	name := display(b.MerchantName, maxName)
	if err := checkDisplay("59 (merchant name)", name, maxName); err != nil {
		return "", err
	}
	city := display(b.MerchantCity, maxCity)
	if err := checkDisplay("60 (merchant city)", city, maxCity); err != nil {
		return "", err
	}
	switch b.PointOfInitiation {
	case "", reusable, singleUse:
	default:
		return "", malformed("tag 01 (point of initiation) is %q, want \"11\" or \"12\"", b.PointOfInitiation)
	}
	if (b.Key == "") == (b.Location == "") {
		return "", malformed("tag 26 needs exactly one of key (01) and location (25)")
	}
	if strings.Contains(b.Location, "://") {
		return "", malformed("tag 26 location %q must not carry a URL scheme", b.Location)
	}
	mcc := b.MerchantCategoryCode
	if mcc == "" {
		mcc = "0000"
	}
	if len(mcc) != 4 || !digits(mcc) {
		return "", malformed("tag 52 (merchant category) %q is not four digits", mcc)
	}
	if b.Amount < 0 || b.Amount > maxAmount {
		return "", malformed("amount %d centavos is outside 0..%d", b.Amount, int64(maxAmount))
	}
	txid := b.TxID
	if txid == "" {
		txid = "***"
	}
	if !validTxID(txid) {
		return "", malformed("tag 62 txid %q must be 1..25 letters and digits, or ***", txid)
	}
	for _, f := range [...]struct{ name, v string }{
		{"tag 26 key", b.Key}, {"tag 26 info", b.Info}, {"tag 26 location", b.Location},
	} {
		if err := checkText(f.name, f.v); err != nil {
			return "", err
		}
	}

	var w writer
	w.put("00", "01")
	if b.PointOfInitiation != "" {
		w.put("01", b.PointOfInitiation)
	}
	var acct writer
	acct.put("00", gui)
	if b.Key != "" {
		acct.put("01", b.Key)
	}
	if b.Info != "" {
		acct.put("02", b.Info)
	}
	if b.Location != "" {
		acct.put("25", b.Location)
	}
	acct.extra("26", b.AccountExtra, map[string]bool{"00": true, "01": true, "02": true, "25": true})
	w.nest("26", &acct)
	w.put("52", mcc)
	w.put("53", "986")
	if b.Amount > 0 {
		w.put("54", formatAmount(b.Amount))
	}
	w.put("58", "BR")
	w.put("59", name)
	w.put("60", city)
	var add writer
	add.put("05", txid)
	add.extra("62", b.AdditionalDataExtra, map[string]bool{"05": true})
	w.nest("62", &add)
	w.extra("", b.Extra, knownTags)
	if w.err != nil {
		return "", w.err
	}
	w.b.WriteString("6304")
	crc := checksum(w.b.String())
	w.b.WriteString(crc)
	return w.b.String(), nil
}

// validTxID accepts the alphabet the BCB allows in 62/05.
func validTxID(s string) bool {
	if s == "***" {
		return true
	}
	if len(s) < 1 || len(s) > maxTxID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !alnum(s[i]) {
			return false
		}
	}
	return true
}

func alnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// writer accumulates TLVs and keeps the first error, so Encode reads
// as the list of tags it writes.
type writer struct {
	b   strings.Builder
	err error
}

func (w *writer) put(tag, v string) {
	if w.err != nil {
		return
	}
	if len(v) < 1 || len(v) > maxValue {
		w.err = malformed("tag %s is %d bytes long, EMV allows 1..99", tag, len(v))
		return
	}
	n := len(v)
	w.b.Grow(len(tag) + 2 + n)
	w.b.WriteString(tag)
	w.b.WriteByte(byte('0' + n/10))
	w.b.WriteByte(byte('0' + n%10))
	w.b.WriteString(v)
}

func (w *writer) nest(tag string, inner *writer) {
	if w.err == nil {
		w.err = inner.err
	}
	w.put(tag, inner.b.String())
}

// extra writes preserved TLVs after checking they cannot be mistaken for a
// field the template already models.
func (w *writer) extra(parent string, tlvs []TLV, reserved map[string]bool) {
	where := "top-level"
	if parent != "" {
		where = "tag " + parent
	}
	for _, t := range tlvs {
		if w.err != nil {
			return
		}
		if len(t.Tag) != 2 || !digits(t.Tag) {
			w.err = malformed("%s extra tag %q is not two digits", where, t.Tag)
			return
		}
		if reserved[t.Tag] {
			w.err = malformed("%s extra tag %s is modelled by a BRCode field", where, t.Tag)
			return
		}
		if err := checkText(where+" extra tag "+t.Tag, t.Value); err != nil {
			w.err = err
			return
		}
		w.put(t.Tag, t.Value)
	}
}
