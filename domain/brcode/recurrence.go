package brcode

import "strings"

// recurrenceTag is the top-level template of Pix Automático: the
// arrangement's GUI (00) and the location of the recurrence (25), without
// a URL scheme, where the payer's app reads the mandate to authorise.
const recurrenceTag = "80"

func recurrenceTemplate(recLocation string) (string, error) {
	for _, scheme := range []string{"https://", "http://"} {
		if len(recLocation) >= len(scheme) && strings.EqualFold(recLocation[:len(scheme)], scheme) {
			recLocation = recLocation[len(scheme):]
			break
		}
	}
	if recLocation == "" {
		return "", malformed("a recurrence needs a location")
	}
	if err := checkText("tag 80 location", recLocation); err != nil {
		return "", err
	}
	var t writer
	t.put("00", gui)
	t.put("25", recLocation)
	return t.b.String(), t.err
}

// WithRecurrence adds the template of a recurrence at recLocation to code:
// the composite code of a charge and a mandate (the API Pix's JORNADA_3,
// an immediate charge paid while the payer authorises the recurrence).
// code must be a valid BR Code without one.
func WithRecurrence(code, recLocation string) (string, error) {
	b, err := Parse(code)
	if err != nil {
		return "", err
	}
	if _, ok := RecurrenceLocation(b); ok {
		return "", malformed("tag 80 appears twice")
	}
	v, err := recurrenceTemplate(recLocation)
	if err != nil {
		return "", err
	}
	b.Extra = append(b.Extra, TLV{Tag: recurrenceTag, Value: v})
	return b.Encode()
}

// NewRecurrence builds the code of a recurrence alone (the API Pix's
// JORNADA_2): template 26 carries only the arrangement's GUI, since there
// is no charge to pay, template 80 the recurrence's location; no amount,
// txid "***".
func NewRecurrence(recLocation, merchantName, merchantCity string) (string, error) {
	name, city := display(merchantName, maxName), display(merchantCity, maxCity)
	if err := checkDisplay("59 (merchant name)", name, maxName); err != nil {
		return "", err
	}
	if err := checkDisplay("60 (merchant city)", city, maxCity); err != nil {
		return "", err
	}
	rec, err := recurrenceTemplate(recLocation)
	if err != nil {
		return "", err
	}
	var w, acct, add writer
	acct.put("00", gui)
	add.put("05", "***")
	w.put("00", "01")
	w.nest("26", &acct)
	w.put("52", "0000")
	w.put("53", "986")
	w.put("58", "BR")
	w.put("59", name)
	w.put("60", city)
	w.nest("62", &add)
	w.put(recurrenceTag, rec)
	if w.err != nil {
		return "", w.err
	}
	w.b.WriteString("6304")
	w.b.WriteString(checksum(w.b.String()))
	return w.b.String(), nil
}

// RecurrenceLocation is the location of the recurrence a code carries
// (template 80, sub-tag 25), and false when it carries none.
func RecurrenceLocation(b *Code) (string, bool) {
	for _, t := range b.Extra {
		if t.Tag != recurrenceTag {
			continue
		}
		inner, err := split(t.Value)
		if err != nil {
			return "", false
		}
		for _, s := range inner {
			if s.Tag == "25" {
				return s.Value, true
			}
		}
	}
	return "", false
}

// SplitTLV reads a BR Code (or a template's value) as its top-level data
// objects, in order, without checking what they mean.
func SplitTLV(s string) ([]TLV, error) { return split(s) }
