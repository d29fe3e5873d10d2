package domain

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Boleto is a FEBRABAN boleto de cobrança: the 44-digit barcode and the
// 47-digit digitable line ("linha digitável") that encodes the same data
// with three mod-10 field check digits and the mod-11 general check digit.
type Boleto struct {
	Barcode string
	Line    string
}

// boletoBaseDate is day 0 of the due-date factor; the factor wrapped from
// 9999 back to 1000 on 2025-02-22 (FEBRABAN, "fator de vencimento").
var boletoBaseDate = time.Date(1997, 10, 7, 0, 0, 0, 0, time.UTC)

// BoletoDueFactor returns the 4-digit due-date factor of due.
func BoletoDueFactor(due time.Time) int {
	d := time.Date(due.Year(), due.Month(), due.Day(), 0, 0, 0, 0, time.UTC)
	days := int(d.Sub(boletoBaseDate).Hours() / 24)
	if days > 9999 {
		return (days-10000)%9000 + 1000
	}
	return days
}

// NewBoleto builds a boleto of bank (3 digits) for amount in centavos, due
// on due, with a 25-digit free field ("campo livre") of the issuer.
func NewBoleto(bank string, amount int64, due time.Time, freeField string) (Boleto, error) {
	if len(bank) != 3 || !allDigits(bank) || len(freeField) != 25 || !allDigits(freeField) {
		return Boleto{}, fmt.Errorf("boleto: bank must be 3 digits and the free field 25 digits")
	}
	if amount <= 0 || amount > 99_999_999_99 {
		return Boleto{}, fmt.Errorf("boleto: amount %d out of range", amount)
	}
	factor := fmt.Sprintf("%04d", BoletoDueFactor(due))
	value := fmt.Sprintf("%010d", amount)
	// Barcode without its check digit (position 5).
	body := bank + "9" + factor + value + freeField
	dv := BoletoBarcodeDV(body)
	barcode := body[:4] + strconv.Itoa(dv) + body[4:]
	f1 := bank + "9" + freeField[0:5]
	f2 := freeField[5:15]
	f3 := freeField[15:25]
	line := f1 + strconv.Itoa(Mod10(f1)) +
		f2 + strconv.Itoa(Mod10(f2)) +
		f3 + strconv.Itoa(Mod10(f3)) +
		strconv.Itoa(dv) + factor + value
	return Boleto{Barcode: barcode, Line: line}, nil
}

// BoletoBarcodeDV is the mod-11 general check digit of the 43 barcode
// digits other than the check digit itself: weights 2..9 from the right;
// 11 − (sum mod 11), where 0, 10 and 11 become 1.
func BoletoBarcodeDV(digits43 string) int {
	sum, w := 0, 2
	for i := len(digits43) - 1; i >= 0; i-- {
		sum += int(digits43[i]-'0') * w
		if w++; w > 9 {
			w = 2
		}
	}
	dv := 11 - sum%11
	if dv == 0 || dv == 10 || dv == 11 {
		return 1
	}
	return dv
}

// Mod10 is the FEBRABAN mod-10 check digit: weights 2, 1, 2, ... from the
// right, the digits of each product summed.
func Mod10(digits string) int {
	sum, w := 0, 2
	for i := len(digits) - 1; i >= 0; i-- {
		p := int(digits[i]-'0') * w
		sum += p/10 + p%10
		w = 3 - w
	}
	return (10 - sum%10) % 10
}

// ValidBoletoLine checks the three field check digits and the general
// check digit of a 47-digit digitable line.
func ValidBoletoLine(line string) bool {
	if len(line) != 47 || !allDigits(line) {
		return false
	}
	for _, f := range [][2]int{{0, 9}, {10, 20}, {21, 31}} {
		if Mod10(line[f[0]:f[1]]) != int(line[f[1]]-'0') {
			return false
		}
	}
	return ValidBoletoBarcode(BoletoLineToBarcode(line))
}

// BoletoLineToBarcode rebuilds the barcode a digitable line encodes.
func BoletoLineToBarcode(line string) string {
	if len(line) != 47 {
		return ""
	}
	return line[0:4] + line[32:33] + line[33:47] + line[4:9] + line[10:20] + line[21:31]
}

// ValidBoletoBarcode checks the general check digit of a 44-digit barcode.
func ValidBoletoBarcode(code string) bool {
	if len(code) != 44 || !allDigits(code) {
		return false
	}
	return BoletoBarcodeDV(code[:4]+code[5:]) == int(code[4]-'0')
}

// MultibancoReference computes a 9-digit Multibanco reference for entity
// (5 digits), a 7-digit identifier and amount in cents: the identifier and
// two mod-97 check digits over entity, identifier and the 8-digit amount,
// as SIBS specifies for references with check digits.
func MultibancoReference(entity, id7 string, amount int64) (string, error) {
	if len(entity) != 5 || !allDigits(entity) || len(id7) != 7 || !allDigits(id7) || amount < 0 || amount > 99_999_999 {
		return "", fmt.Errorf("multibanco: entity 5 digits, id 7 digits, amount up to 999999.99")
	}
	s := entity + id7 + fmt.Sprintf("%08d", amount)
	rem := 0
	for _, r := range s {
		rem = (rem*10 + int(r-'0')) % 97
	}
	rem = rem * 100 % 97
	return id7 + fmt.Sprintf("%02d", 98-rem), nil
}

// ValidMultibancoReference checks a reference's check digits.
func ValidMultibancoReference(entity, ref string, amount int64) bool {
	if len(ref) != 9 {
		return false
	}
	want, err := MultibancoReference(entity, ref[:7], amount)
	return err == nil && want == ref
}

func allDigits(s string) bool {
	return s != "" && strings.Trim(s, "0123456789") == ""
}
