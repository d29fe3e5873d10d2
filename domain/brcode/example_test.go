package brcode_test

import (
	"errors"
	"fmt"

	"github.com/quitapix/quita/domain/brcode"
)

// A charge created at the PSP is served at a location URL; the BR Code only
// points there, so it carries no amount and no txid of its own.
func ExampleNewDynamic() {
	code, err := brcode.NewDynamic(
		"https://payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e87",
		"Thales Ogliari", "São Miguel do Oeste",
	)
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(code)
	// Output:
	// 00020101021226740014br.gov.bcb.pix2552payload.psp.com/3ec9d2f9-5f03-4e0e-820d-63a81e769e875204000053039865802BR5914Thales Ogliari6015Sao Miguel do O62070503***63047EBE
}

// A static code pays a Pix key directly and can be printed once and reused.
func ExampleNewStatic() {
	code, err := brcode.NewStatic("thalesog@me.com", "Pedido 123", 10_00, "THALES OGLIARI", "SAO MIGUEL DO O", "")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Println(code)
	// Output:
	// 00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6
}

func ExampleParse() {
	b, err := brcode.Parse("00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540510.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6")
	if err != nil {
		fmt.Println(err)
		return
	}
	fmt.Printf("key=%s amount=%d centavos merchant=%q city=%q\n", b.Key, b.Amount, b.MerchantName, b.MerchantCity)

	// One changed character and the checksum no longer matches.
	_, err = brcode.Parse("00020126510014br.gov.bcb.pix0115thalesog@me.com0210Pedido 123520400005303986540590.005802BR5914THALES OGLIARI6015SAO MIGUEL DO O62070503***63040DC6")
	fmt.Println(errors.Is(err, brcode.ErrChecksum))
	// Output:
	// key=thalesog@me.com amount=1000 centavos merchant="THALES OGLIARI" city="SAO MIGUEL DO O"
	// true
}
