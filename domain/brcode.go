package domain

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// ErrBRCodeMalformed is returned when a BR Code, or the fields a BR Code is
// to be built from, break the EMV MPM layout or the Banco Central's Pix
// profile of it. Payer apps reject such codes, so Quita never emits one and
// refuses to trust one it reads. The wrapped message names the offending tag.
var ErrBRCodeMalformed = errors.New("malformed BR Code")

// ErrBRCodeChecksum is returned when a BR Code is well formed but its CRC
// (tag 63) does not match its content: the code was mistyped, truncated or
// altered after it was issued, and paying it could credit the wrong party.
var ErrBRCodeChecksum = errors.New("BR Code checksum mismatch")

// brcodeGUI identifies the Pix arrangement inside merchant account template 26.
const brcodeGUI = "br.gov.bcb.pix"

// Limits from the BCB profile. The amount limit comes from tag 54 holding at
// most 13 characters ("9999999999.99").
const (
	brcodeMaxName   = 25
	brcodeMaxCity   = 15
	brcodeMaxTxID   = 25
	brcodeMaxAmount = 999_999_999_999
	brcodeMaxValue  = 99
	brcodeMaxAmtLen = 13
)

// Point-of-initiation values (tag 01). Pix uses 12 for codes that must be
// paid at most once; 11 says the code may be reused.
const (
	brcodeReusable  = "11"
	brcodeSingleUse = "12"
)

// TLV is one EMV data object kept verbatim: a two-digit tag and its value.
// Quita carries tags it does not interpret (Pix Automático's 80, other
// arrangements' 27..51, unreserved 80..99) so that re-encoding a code read
// from elsewhere does not silently drop what another party put there.
type TLV struct {
	Tag   string
	Value string
}

// BRCode is a Pix "copia e cola" payload decoded into the fields the BCB
// profile gives meaning to. A code is either static (Key set: the payer's
// app pays the key directly) or dynamic (Location set: the app fetches the
// charge from the PSP at that URL), never both.
//
// Lengths are counted in bytes, the way Go and most PSPs count them; Encode
// keeps the merchant name and city to printable ASCII, where bytes and
// characters agree, because payer apps disagree on how to count the rest.
type BRCode struct {
	// PointOfInitiation is tag 01: "12" makes payer apps refuse a second
	// payment of the same code, "11" allows reuse, "" omits the tag (the
	// usual choice for static codes).
	PointOfInitiation string

	// Key is the Pix key (26/01) a static code pays.
	Key string
	// Info is free text shown to the payer (26/02), static codes only by
	// convention; "" omits it.
	Info string
	// Location is the PSP URL of a dynamic code (26/25), without "https://":
	// payer apps add the scheme themselves.
	Location string
	// AccountExtra holds sub-tags of template 26 that Quita does not
	// interpret, in the order they were read.
	AccountExtra []TLV

	// MerchantCategoryCode is tag 52; Pix normally carries "0000" and ""
	// encodes as "0000".
	MerchantCategoryCode string

	// Amount is tag 54 in centavos; 0 leaves it out so the payer types the
	// amount.
	Amount int64

	// MerchantName (59) and MerchantCity (60) are what the payer sees before
	// confirming. Encode strips accents and truncates them to 25 and 15
	// characters because longer or non-ASCII values break some payer apps.
	MerchantName string
	MerchantCity string

	// TxID is 62/05, the reconciliation id of a static code. "" encodes as
	// "***", the BCB's marker for "no txid" (always the case for dynamic
	// codes, whose txid lives behind Location), and "***" decodes as "".
	TxID string
	// AdditionalDataExtra holds sub-tags of template 62 other than 05.
	AdditionalDataExtra []TLV

	// Extra holds top-level tags Quita does not interpret, in order. They
	// are written after tag 62 and before the CRC.
	Extra []TLV
}

// brcodeKnownTags are the top-level tags that BRCode models as fields; Extra
// must not repeat them or the encoded code would carry a tag twice.
var brcodeKnownTags = map[string]bool{
	"00": true, "01": true, "26": true, "52": true, "53": true, "54": true,
	"58": true, "59": true, "60": true, "62": true, "63": true,
}

// CRC16CCITT returns the CRC-16/CCITT-FALSE checksum (polynomial 0x1021,
// initial value 0xFFFF, no reflection, no final xor) that EMV MPM puts in
// tag 63 so payer apps can catch a mistyped or truncated code.
func CRC16CCITT(data []byte) uint16 {
	crc := uint16(0xFFFF)
	for _, b := range data {
		crc ^= uint16(b) << 8
		for range 8 {
			if crc&0x8000 != 0 {
				crc = crc<<1 ^ 0x1021
			} else {
				crc <<= 1
			}
		}
	}
	return crc
}

// brcodeCRC formats the checksum of payload (which must end in "6304") the
// way tag 63 carries it.
func brcodeCRC(payload string) string {
	return fmt.Sprintf("%04X", CRC16CCITT([]byte(payload)))
}

func brcodeMalformed(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBRCodeMalformed, fmt.Sprintf(format, args...))
}

// ParseBRCode decodes a Pix BR Code and checks its layout, its CRC and every
// field the BCB profile constrains. Errors wrap ErrBRCodeMalformed or
// ErrBRCodeChecksum and name the offending tag. It tolerates only what does
// not change meaning (tag order, "1" for "1.00", lower-case hex in the CRC,
// an absent tag 62) and rejects any value Encode would have to alter, so a
// code it returns always re-encodes to one that decodes to the same fields.
// Callers handling pasted text should trim white space first; ParseBRCode
// does not guess where a code ends.
func ParseBRCode(s string) (*BRCode, error) {
	if !utf8.ValidString(s) {
		return nil, brcodeMalformed("not valid UTF-8")
	}
	tlvs, err := brcodeSplit(s)
	if err != nil {
		return nil, brcodeMalformed("%v", err)
	}
	if len(tlvs) < 2 || tlvs[0].Tag != "00" {
		return nil, brcodeMalformed("must start with tag 00")
	}
	if tlvs[0].Value != "01" {
		return nil, brcodeMalformed("tag 00 (payload format) is %q, want \"01\"", tlvs[0].Value)
	}
	last := tlvs[len(tlvs)-1]
	if last.Tag != "63" || len(last.Value) != 4 {
		return nil, brcodeMalformed("must end with tag 63 holding 4 characters")
	}
	got, ok := brcodeHex16(last.Value)
	if !ok {
		return nil, brcodeMalformed("tag 63 (CRC) %q is not four hexadecimal digits", last.Value)
	}
	if want := CRC16CCITT([]byte(s[:len(s)-4])); got != want {
		return nil, fmt.Errorf("%w: tag 63 says %s, content gives %04X", ErrBRCodeChecksum, last.Value, want)
	}

	b := &BRCode{}
	var seen [100]bool
	haveTxID := false
	for _, t := range tlvs[1 : len(tlvs)-1] {
		n, _ := strconv.Atoi(t.Tag) // brcodeSplit admits only two digits
		if brcodeKnownTags[t.Tag] {
			if seen[n] {
				return nil, brcodeMalformed("tag %s appears twice", t.Tag)
			}
			seen[n] = true
		}
		switch t.Tag {
		case "00", "63":
			return nil, brcodeMalformed("tag %s out of place", t.Tag)
		case "01":
			b.PointOfInitiation = t.Value
		case "26":
			if err := b.parseAccount(t.Value); err != nil {
				return nil, err
			}
		case "52":
			b.MerchantCategoryCode = t.Value
		case "53":
			if t.Value != "986" {
				return nil, brcodeMalformed("tag 53 (currency) is %q, Pix is always \"986\" (BRL)", t.Value)
			}
		case "54":
			amount, err := brcodeParseAmount(t.Value)
			if err != nil {
				return nil, err
			}
			b.Amount = amount
		case "58":
			if t.Value != "BR" {
				return nil, brcodeMalformed("tag 58 (country) is %q, want \"BR\"", t.Value)
			}
		case "59":
			b.MerchantName = t.Value
		case "60":
			b.MerchantCity = t.Value
		case "62":
			if haveTxID, err = b.parseAdditionalData(t.Value); err != nil {
				return nil, err
			}
		default:
			b.Extra = append(b.Extra, t)
		}
	}
	for _, tag := range []int{26, 52, 53, 58, 59, 60} {
		if !seen[tag] {
			return nil, brcodeMalformed("missing tag %02d", tag)
		}
	}
	if seen[62] && !haveTxID {
		return nil, brcodeMalformed("tag 62 without sub-tag 05 (txid)")
	}
	// Encode normalises the merchant name and city; a value it would change
	// could not survive a round trip, so it is rejected here instead.
	if err := brcodeCheckDisplay("59 (merchant name)", b.MerchantName, brcodeMaxName); err != nil {
		return nil, err
	}
	if err := brcodeCheckDisplay("60 (merchant city)", b.MerchantCity, brcodeMaxCity); err != nil {
		return nil, err
	}
	// The remaining rules (template sizes, field alphabets) live in one place.
	if _, err := b.Encode(); err != nil {
		return nil, err
	}
	return b, nil
}

// parseAccount reads merchant account template 26.
func (b *BRCode) parseAccount(v string) error {
	subs, err := brcodeSplit(v)
	if err != nil {
		return brcodeMalformed("tag 26: %v", err)
	}
	var seen [100]bool
	for _, t := range subs {
		n, _ := strconv.Atoi(t.Tag)
		switch t.Tag {
		case "00", "01", "02", "25":
			if seen[n] {
				return brcodeMalformed("tag 26 sub-tag %s appears twice", t.Tag)
			}
			seen[n] = true
		}
		switch t.Tag {
		case "00":
			if !strings.EqualFold(t.Value, brcodeGUI) {
				return brcodeMalformed("tag 26 GUI is %q, want %q", t.Value, brcodeGUI)
			}
		case "01":
			b.Key = t.Value
		case "02":
			b.Info = t.Value
		case "25":
			b.Location = t.Value
		default:
			b.AccountExtra = append(b.AccountExtra, t)
		}
	}
	if !seen[0] {
		return brcodeMalformed("tag 26 has no GUI (sub-tag 00)")
	}
	return nil
}

// parseAdditionalData reads template 62 and reports whether it held a txid.
func (b *BRCode) parseAdditionalData(v string) (bool, error) {
	subs, err := brcodeSplit(v)
	if err != nil {
		return false, brcodeMalformed("tag 62: %v", err)
	}
	found := false
	for _, t := range subs {
		if t.Tag != "05" {
			b.AdditionalDataExtra = append(b.AdditionalDataExtra, t)
			continue
		}
		if found {
			return false, brcodeMalformed("tag 62 sub-tag 05 appears twice")
		}
		found = true
		if t.Value != "***" {
			b.TxID = t.Value
		}
	}
	return found, nil
}

// brcodeSplit cuts s into consecutive TLVs. Tags and lengths are two ASCII
// digits; EMV lengths run from 01 to 99.
func brcodeSplit(s string) ([]TLV, error) {
	var out []TLV
	for i := 0; i < len(s); {
		if len(s)-i < 4 {
			return nil, fmt.Errorf("truncated data object at offset %d", i)
		}
		tag, length := s[i:i+2], s[i+2:i+4]
		if !brcodeDigits(tag) {
			return nil, fmt.Errorf("tag %q at offset %d is not two digits", tag, i)
		}
		if !brcodeDigits(length) {
			return nil, fmt.Errorf("tag %s: length %q is not two digits", tag, length)
		}
		n := int(length[0]-'0')*10 + int(length[1]-'0')
		if n == 0 {
			return nil, fmt.Errorf("tag %s: empty value", tag)
		}
		i += 4
		if len(s)-i < n {
			return nil, fmt.Errorf("tag %s: length %d runs past the end", tag, n)
		}
		out = append(out, TLV{Tag: tag, Value: s[i : i+n]})
		i += n
	}
	return out, nil
}

// brcodeHex16 reads the four hex digits of tag 63. Lower case is accepted
// because the checksum, not the spelling, is what protects the payer.
func brcodeHex16(s string) (uint16, bool) {
	if len(s) != 4 {
		return 0, false
	}
	var v uint16
	for i := 0; i < 4; i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			c -= '0'
		case c >= 'A' && c <= 'F':
			c -= 'A' - 10
		case c >= 'a' && c <= 'f':
			c -= 'a' - 10
		default:
			return 0, false
		}
		v = v<<4 | uint16(c)
	}
	return v, true
}

func brcodeDigits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// brcodeParseAmount reads tag 54 by hand: a float would turn "0.29" into
// 28 centavos.
func brcodeParseAmount(v string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, brcodeMalformed("tag 54 (amount) %q %s", v, why)
	}
	if len(v) > brcodeMaxAmtLen {
		return bad("is longer than 13 characters")
	}
	whole, frac, hasDot := strings.Cut(v, ".")
	if !brcodeDigits(whole) {
		return bad("is not a decimal number")
	}
	if hasDot && (len(frac) < 1 || len(frac) > 2 || !brcodeDigits(frac)) {
		return bad("needs one or two digits after the point")
	}
	var amount int64
	for i := 0; i < len(whole); i++ {
		amount = amount*10 + int64(whole[i]-'0') // at most 13 digits: no overflow
	}
	amount *= 100
	switch len(frac) {
	case 1:
		amount += int64(frac[0]-'0') * 10
	case 2:
		amount += int64(frac[0]-'0')*10 + int64(frac[1]-'0')
	}
	if amount == 0 {
		return bad("is zero; leave tag 54 out to let the payer choose")
	}
	if amount > brcodeMaxAmount {
		return bad("is above 9999999999.99")
	}
	return amount, nil
}

// brcodeFormatAmount writes centavos with exactly two decimals, the form
// every payer app reads.
func brcodeFormatAmount(c int64) string {
	return fmt.Sprintf("%d.%02d", c/100, c%100)
}

// brcodeCheckDisplay enforces what Encode's normalisation guarantees for
// tags 59 and 60: 1..max printable ASCII characters.
func brcodeCheckDisplay(field, v string, max int) error {
	if v == "" {
		return brcodeMalformed("tag %s is empty", field)
	}
	if len(v) > max {
		return brcodeMalformed("tag %s is longer than %d characters", field, max)
	}
	for i := 0; i < len(v); i++ {
		if v[i] < 0x20 || v[i] > 0x7e {
			return brcodeMalformed("tag %s must be printable ASCII", field)
		}
	}
	return nil
}

// brcodeCheckText rejects control characters and broken UTF-8, which some
// payer apps render as garbage or refuse outright.
func brcodeCheckText(field, v string) error {
	if !utf8.ValidString(v) {
		return brcodeMalformed("%s is not valid UTF-8", field)
	}
	for _, r := range v {
		if r < 0x20 || r == 0x7f || (r >= 0x80 && r < 0xa0) {
			return brcodeMalformed("%s contains a control character", field)
		}
	}
	return nil
}

// brcodeASCII maps the Latin letters Brazilian names use to their unaccented
// form. Payer apps are not consistent about non-ASCII in tags 59 and 60, and
// the BCB profile asks for none.
var brcodeASCII = map[rune]string{
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

// brcodeDisplay turns a merchant-supplied name or city into what tags 59/60
// may carry: accents stripped, other non-ASCII and control characters
// dropped (a decomposed "e" + U+0301 keeps its "e"), truncated to max. It is
// the identity on values that already qualify, which keeps Parse and Encode
// in agreement.
func brcodeDisplay(s string, max int) string {
	var b strings.Builder
	for _, r := range s {
		switch {
		case r >= 0x20 && r <= 0x7e:
			b.WriteRune(r)
		case brcodeASCII[r] != "":
			b.WriteString(brcodeASCII[r])
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
// are normalised (see BRCode); every other field must already be valid, and
// errors wrap ErrBRCodeMalformed. Encode does not modify b.
func (b *BRCode) Encode() (string, error) {
	if b == nil {
		return "", brcodeMalformed("nil BR Code")
	}
	name := brcodeDisplay(b.MerchantName, brcodeMaxName)
	if err := brcodeCheckDisplay("59 (merchant name)", name, brcodeMaxName); err != nil {
		return "", err
	}
	city := brcodeDisplay(b.MerchantCity, brcodeMaxCity)
	if err := brcodeCheckDisplay("60 (merchant city)", city, brcodeMaxCity); err != nil {
		return "", err
	}
	switch b.PointOfInitiation {
	case "", brcodeReusable, brcodeSingleUse:
	default:
		return "", brcodeMalformed("tag 01 (point of initiation) is %q, want \"11\" or \"12\"", b.PointOfInitiation)
	}
	if (b.Key == "") == (b.Location == "") {
		return "", brcodeMalformed("tag 26 needs exactly one of key (01) and location (25)")
	}
	if strings.Contains(b.Location, "://") {
		return "", brcodeMalformed("tag 26 location %q must not carry a URL scheme", b.Location)
	}
	mcc := b.MerchantCategoryCode
	if mcc == "" {
		mcc = "0000"
	}
	if len(mcc) != 4 || !brcodeDigits(mcc) {
		return "", brcodeMalformed("tag 52 (merchant category) %q is not four digits", mcc)
	}
	if b.Amount < 0 || b.Amount > brcodeMaxAmount {
		return "", brcodeMalformed("amount %d centavos is outside 0..%d", b.Amount, int64(brcodeMaxAmount))
	}
	txid := b.TxID
	if txid == "" {
		txid = "***"
	}
	if !brcodeValidTxID(txid) {
		return "", brcodeMalformed("tag 62 txid %q must be 1..25 letters and digits, or ***", txid)
	}
	for _, f := range [...]struct{ name, v string }{
		{"tag 26 key", b.Key}, {"tag 26 info", b.Info}, {"tag 26 location", b.Location},
	} {
		if err := brcodeCheckText(f.name, f.v); err != nil {
			return "", err
		}
	}

	var w brcodeWriter
	w.put("00", "01")
	if b.PointOfInitiation != "" {
		w.put("01", b.PointOfInitiation)
	}
	var acct brcodeWriter
	acct.put("00", brcodeGUI)
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
		w.put("54", brcodeFormatAmount(b.Amount))
	}
	w.put("58", "BR")
	w.put("59", name)
	w.put("60", city)
	var add brcodeWriter
	add.put("05", txid)
	add.extra("62", b.AdditionalDataExtra, map[string]bool{"05": true})
	w.nest("62", &add)
	w.extra("", b.Extra, brcodeKnownTags)
	if w.err != nil {
		return "", w.err
	}
	payload := w.b.String() + "6304"
	return payload + brcodeCRC(payload), nil
}

// brcodeValidTxID accepts the alphabet the BCB allows in 62/05.
func brcodeValidTxID(s string) bool {
	if s == "***" {
		return true
	}
	if len(s) < 1 || len(s) > brcodeMaxTxID {
		return false
	}
	for i := 0; i < len(s); i++ {
		if !brcodeAlnum(s[i]) {
			return false
		}
	}
	return true
}

func brcodeAlnum(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// brcodeWriter accumulates TLVs and keeps the first error, so Encode reads
// as the list of tags it writes.
type brcodeWriter struct {
	b   strings.Builder
	err error
}

func (w *brcodeWriter) put(tag, v string) {
	if w.err != nil {
		return
	}
	if len(v) < 1 || len(v) > brcodeMaxValue {
		w.err = brcodeMalformed("tag %s is %d bytes long, EMV allows 1..99", tag, len(v))
		return
	}
	fmt.Fprintf(&w.b, "%s%02d%s", tag, len(v), v)
}

func (w *brcodeWriter) nest(tag string, inner *brcodeWriter) {
	if w.err == nil {
		w.err = inner.err
	}
	w.put(tag, inner.b.String())
}

// extra writes preserved TLVs after checking they cannot be mistaken for a
// field the template already models.
func (w *brcodeWriter) extra(parent string, tlvs []TLV, reserved map[string]bool) {
	where := "top-level"
	if parent != "" {
		where = "tag " + parent
	}
	for _, t := range tlvs {
		if w.err != nil {
			return
		}
		if len(t.Tag) != 2 || !brcodeDigits(t.Tag) {
			w.err = brcodeMalformed("%s extra tag %q is not two digits", where, t.Tag)
			return
		}
		if reserved[t.Tag] {
			w.err = brcodeMalformed("%s extra tag %s is modelled by a BRCode field", where, t.Tag)
			return
		}
		if err := brcodeCheckText(where+" extra tag "+t.Tag, t.Value); err != nil {
			w.err = err
			return
		}
		w.put(t.Tag, t.Value)
	}
}

// NewDynamicBRCode builds the code for a charge the PSP serves at location,
// the usual Quita case: single use (01 = "12"), no amount in the code (the
// payer's app reads it from the PSP), txid "***". A leading "https://" or
// "http://" is removed because the BCB profile carries the URL without one.
func NewDynamicBRCode(location, merchantName, merchantCity string) (string, error) {
	for _, scheme := range []string{"https://", "http://"} {
		if len(location) >= len(scheme) && strings.EqualFold(location[:len(scheme)], scheme) {
			location = location[len(scheme):]
			break
		}
	}
	if location == "" {
		return "", brcodeMalformed("dynamic code needs a location")
	}
	b := BRCode{
		PointOfInitiation: brcodeSingleUse,
		Location:          location,
		MerchantName:      merchantName,
		MerchantCity:      merchantCity,
	}
	return b.Encode()
}

// NewStaticBRCode builds a reusable code that pays key directly. amount is
// in centavos (0 lets the payer choose); info is shown to the payer; txid
// "" becomes "***", which means the merchant will reconcile by other means.
func NewStaticBRCode(key, info string, amount int64, merchantName, merchantCity, txid string) (string, error) {
	if key == "" {
		return "", brcodeMalformed("static code needs a Pix key")
	}
	b := BRCode{
		Key:          key,
		Info:         info,
		Amount:       amount,
		MerchantName: merchantName,
		MerchantCity: merchantCity,
		TxID:         txid,
	}
	return b.Encode()
}
