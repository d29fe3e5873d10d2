package brcode

import (
	"fmt"
	"strconv"
	"strings"
	"unicode/utf8"
)

// Parse decodes a Pix BR Code and checks its layout, its CRC and every
// field the BCB profile constrains. Errors wrap ErrMalformed or
// ErrChecksum and name the offending tag. It tolerates only what does
// not change meaning (tag order, "1" for "1.00", lower-case hex in the CRC,
// an absent tag 62) and rejects any value Encode would have to alter, so a
// code it returns always re-encodes to one that decodes to the same fields.
// Callers handling pasted text should trim white space first; Parse
// does not guess where a code ends.
func Parse(s string) (*Code, error) {
	if !utf8.ValidString(s) {
		return nil, malformed("not valid UTF-8")
	}
	tlvs, err := split(s)
	if err != nil {
		return nil, malformed("%v", err)
	}
	if len(tlvs) < 2 || tlvs[0].Tag != "00" {
		return nil, malformed("must start with tag 00")
	}
	if tlvs[0].Value != "01" {
		return nil, malformed("tag 00 (payload format) is %q, want \"01\"", tlvs[0].Value)
	}
	last := tlvs[len(tlvs)-1]
	if last.Tag != "63" || len(last.Value) != 4 {
		return nil, malformed("must end with tag 63 holding 4 characters")
	}
	got, ok := hex16(last.Value)
	if !ok {
		return nil, malformed("tag 63 (CRC) %q is not four hexadecimal digits", last.Value)
	}
	if want := CRC16CCITT([]byte(s[:len(s)-4])); got != want {
		return nil, fmt.Errorf("%w: tag 63 says %s, content gives %04X", ErrChecksum, last.Value, want)
	}

	b := &Code{}
	var seen [100]bool
	haveTxID := false
	for _, t := range tlvs[1 : len(tlvs)-1] {
		n, _ := strconv.Atoi(t.Tag) // split admits only two digits
		if knownTags[t.Tag] {
			if seen[n] {
				return nil, malformed("tag %s appears twice", t.Tag)
			}
			seen[n] = true
		}
		switch t.Tag {
		case "00", "63":
			return nil, malformed("tag %s out of place", t.Tag)
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
				return nil, malformed("tag 53 (currency) is %q, Pix is always \"986\" (BRL)", t.Value)
			}
		case "54":
			amount, err := parseAmount(t.Value)
			if err != nil {
				return nil, err
			}
			b.Amount = amount
		case "58":
			if t.Value != "BR" {
				return nil, malformed("tag 58 (country) is %q, want \"BR\"", t.Value)
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
			return nil, malformed("missing tag %02d", tag)
		}
	}
	if seen[62] && !haveTxID {
		return nil, malformed("tag 62 without sub-tag 05 (txid)")
	}
	// Encode normalises the merchant name and city; a value it would change
	// could not survive a round trip, so it is rejected here instead.
	if err := checkDisplay("59 (merchant name)", b.MerchantName, maxName); err != nil {
		return nil, err
	}
	if err := checkDisplay("60 (merchant city)", b.MerchantCity, maxCity); err != nil {
		return nil, err
	}
	// The remaining rules (template sizes, field alphabets) live in one place.
	if _, err := b.Encode(); err != nil {
		return nil, err
	}
	return b, nil
}

// parseAccount reads merchant account template 26.
func (b *Code) parseAccount(v string) error {
	subs, err := split(v)
	if err != nil {
		return malformed("tag 26: %v", err)
	}
	var seen [100]bool
	for _, t := range subs {
		n, _ := strconv.Atoi(t.Tag)
		switch t.Tag {
		case "00", "01", "02", "25":
			if seen[n] {
				return malformed("tag 26 sub-tag %s appears twice", t.Tag)
			}
			seen[n] = true
		}
		switch t.Tag {
		case "00":
			if !strings.EqualFold(t.Value, gui) {
				return malformed("tag 26 GUI is %q, want %q", t.Value, gui)
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
		return malformed("tag 26 has no GUI (sub-tag 00)")
	}
	return nil
}

// parseAdditionalData reads template 62 and reports whether it held a txid.
func (b *Code) parseAdditionalData(v string) (bool, error) {
	subs, err := split(v)
	if err != nil {
		return false, malformed("tag 62: %v", err)
	}
	found := false
	for _, t := range subs {
		if t.Tag != "05" {
			b.AdditionalDataExtra = append(b.AdditionalDataExtra, t)
			continue
		}
		if found {
			return false, malformed("tag 62 sub-tag 05 appears twice")
		}
		found = true
		if t.Value != "***" {
			b.TxID = t.Value
		}
	}
	return found, nil
}

// split cuts s into consecutive TLVs. Tags and lengths are two ASCII
// digits; EMV lengths run from 01 to 99.
func split(s string) ([]TLV, error) {
	var out []TLV
	for i := 0; i < len(s); {
		if len(s)-i < 4 {
			return nil, fmt.Errorf("truncated data object at offset %d", i)
		}
		tag, length := s[i:i+2], s[i+2:i+4]
		if !digits(tag) {
			return nil, fmt.Errorf("tag %q at offset %d is not two digits", tag, i)
		}
		if !digits(length) {
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

// hex16 reads the four hex digits of tag 63. Lower case is accepted
// because the checksum, not the spelling, is what protects the payer.
func hex16(s string) (uint16, bool) {
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

func digits(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return s != ""
}

// parseAmount reads tag 54 by hand: a float would turn "0.29" into
// 28 centavos.
func parseAmount(v string) (int64, error) {
	bad := func(why string) (int64, error) {
		return 0, malformed("tag 54 (amount) %q %s", v, why)
	}
	if len(v) > maxAmountLen {
		return bad("is longer than 13 characters")
	}
	whole, frac, hasDot := strings.Cut(v, ".")
	if !digits(whole) {
		return bad("is not a decimal number")
	}
	if hasDot && (len(frac) < 1 || len(frac) > 2 || !digits(frac)) {
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
	if amount > maxAmount {
		return bad("is above 9999999999.99")
	}
	return amount, nil
}
