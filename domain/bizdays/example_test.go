package bizdays_test

import (
	"fmt"

	"github.com/quitapix/quita/domain/bizdays"
)

func ExampleNextBusinessDay() {
	show := func(d bizdays.Date) string { return fmt.Sprintf("%.3s %d %.3s", d.Weekday(), d.Day(), d.Month()) }
	carnival := bizdays.MustDate(2026, 2, 14) // a Saturday
	name, _ := bizdays.HolidayName(carnival.AddDays(3))
	fmt.Println(show(carnival.AddDays(3)), name)
	fmt.Println(show(bizdays.NextBusinessDay(carnival)))
	fmt.Println(bizdays.BusinessDaysBetween(bizdays.MustDate(2026, 2, 13), bizdays.MustDate(2026, 2, 20)))
	// Output:
	// Tue 17 Feb Carnaval (terça-feira)
	// Wed 18 Feb
	// 3
}
