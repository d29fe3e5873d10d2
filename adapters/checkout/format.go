package checkout

import "github.com/quitapix/quita/domain"

// FormatAmount renders minor units as the payer reads money in lang
// (domain.FormatMoney).
func FormatAmount(minor int64, currency string, lang string) string {
	return domain.FormatMoney(minor, domain.Currency(currency), lang == LangEnglish)
}
