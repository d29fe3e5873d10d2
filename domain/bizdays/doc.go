// Package bizdays is the Brazilian bank calendar of business days ("dias
// úteis") that due-date Pix charges count in: a civil Date, the national
// holidays on which banks do not open, and business-day arithmetic.
//
// A Date is a day of the calendar in Brasília (America/Sao_Paulo), with no
// time of day and no time zone: the API Pix states due dates as YYYY-MM-DD
// in Brasília, so the caller turns an instant into a Date once, in that zone
// (DateOf), and everything after is arithmetic on days.
//
// The holidays are the national ones (Lei 662/1949 with its amendments, Lei
// 6.802/1980, Lei 14.759/2023) plus the days of the Easter cycle on which
// banks close (Carnival Monday and Tuesday, Good Friday, Corpus Christi):
//
//	1 Jan     Confraternização Universal
//	Easter−48 Carnival Monday
//	Easter−47 Carnival Tuesday
//	Easter−2  Good Friday (Paixão de Cristo)
//	21 Apr    Tiradentes
//	1 May     Dia do Trabalho
//	Easter+60 Corpus Christi
//	7 Sep     Independência
//	12 Oct    Nossa Senhora Aparecida
//	2 Nov     Finados
//	15 Nov    Proclamação da República
//	20 Nov    Zumbi e da Consciência Negra, from 2024 on
//	25 Dec    Natal
//
// Saturdays and Sundays are never business days. State and municipal
// holidays are not in the calendar: a charge's payer may live anywhere, and
// the calendar must give every party the same answer. The same list applies
// to every year the package accepts (1900 to 9999), except that 20 Nov is a
// holiday only from 2024; for years long past it is the present law applied
// backwards, not history.
//
// The package imports only the standard library and keeps no state.
package bizdays
