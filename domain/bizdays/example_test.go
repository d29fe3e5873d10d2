package bizdays_test

import (
	"fmt"

	"github.com/quitapix/quita/domain/bizdays"
)

func ExampleNextBusinessDay() {
	carnival := bizdays.MustDate(2026, 2, 14) // a Saturday
	name, _ := bizdays.HolidayName(carnival.AddDays(3))
	fmt.Println(carnival.AddDays(3), name)
	fmt.Println(bizdays.NextBusinessDay(carnival))
	fmt.Println(bizdays.BusinessDaysBetween(bizdays.MustDate(2026, 2, 13), bizdays.MustDate(2026, 2, 20)))
	// Output:
	// 2026-02-17 Carnaval (terça-feira)
	// 2026-02-18
	// 3
}
