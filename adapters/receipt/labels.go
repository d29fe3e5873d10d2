package receipt

import (
	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// labels are the words of one receipt language.
type labels struct {
	titles      map[ports.ReceiptKind]string
	pixTitles   map[ports.ReceiptKind]string
	amount      map[ports.ReceiptKind]string
	from, to    map[ports.ReceiptKind]string
	description map[ports.ReceiptKind]string
	reference   map[ports.ReceiptKind]string
	methods     map[domain.Method]string
	strategies  map[domain.RefundStrategy]string

	dateTime, method, fee, name, document, institution, pixKey string
	refundRoute                                                string
	dueDate, original, abatement, discount, fine, interest     string
	transaction, endToEnd, originalEndToEnd, txid              string
	details, testMode, footer, issuedBy, notKnown              string
	// at formats an instant already in Brasília time.
	dateLayout, timeZone string
}

var portuguese = labels{
	titles: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Comprovante de pagamento",
		ports.ReceiptRefund:  "Comprovante de devolução",
		ports.ReceiptPayout:  "Comprovante de transferência",
	},
	pixTitles: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Comprovante de pagamento Pix",
		ports.ReceiptRefund:  "Comprovante de devolução Pix",
		ports.ReceiptPayout:  "Comprovante de transferência Pix",
	},
	amount: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Valor pago",
		ports.ReceiptRefund:  "Valor devolvido",
		ports.ReceiptPayout:  "Valor transferido",
	},
	to: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Recebedor",
		ports.ReceiptRefund:  "Quem recebeu a devolução",
		ports.ReceiptPayout:  "Destino",
	},
	from: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Pagador",
		ports.ReceiptRefund:  "Quem devolveu",
		ports.ReceiptPayout:  "Origem",
	},
	description: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Descrição",
		ports.ReceiptRefund:  "Motivo",
		ports.ReceiptPayout:  "Descrição",
	},
	reference: map[ports.ReceiptKind]string{
		ports.ReceiptRefund: "ID da devolução",
		ports.ReceiptPayout: "ID da transferência",
	},
	methods: map[domain.Method]string{
		domain.MethodPix: "Pix", domain.MethodCreditCard: "Cartão de crédito", domain.MethodBoleto: "Boleto",
		domain.MethodMultibanco: "Multibanco", domain.MethodMBWay: "MB WAY", domain.MethodCrypto: "Criptomoeda",
	},
	strategies: map[domain.RefundStrategy]string{
		domain.StrategyDevolution: "Devolução do Pix original",
		domain.StrategyCashout:    "Novo Pix (cashout)",
	},
	refundRoute:      "Forma da devolução",
	dueDate:          "Vencimento",
	original:         "Valor original",
	abatement:        "Abatimento",
	discount:         "Desconto",
	fine:             "Multa",
	interest:         "Juros",
	dateTime:         "Data e hora",
	method:           "Forma de pagamento",
	fee:              "Tarifa",
	pixKey:           "Chave Pix",
	name:             "Nome",
	document:         "CPF/CNPJ",
	institution:      "Instituição",
	transaction:      "ID da transação",
	endToEnd:         "ID fim a fim (E2E)",
	originalEndToEnd: "E2E do pagamento original",
	txid:             "Identificador (txid)",
	details:          "Identificação",
	testMode:         "AMBIENTE DE TESTES: SEM VALOR FINANCEIRO",
	footer:           "Documentos exibidos com máscara, como o Banco Central mostra as partes de um Pix.",
	issuedBy:         "Emitido por Quita em %s.",
	notKnown:         "Não informado",
	dateLayout:       "02/01/2006 às 15:04:05",
	timeZone:         "horário de Brasília",
}

var english = labels{
	titles: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Payment receipt",
		ports.ReceiptRefund:  "Refund receipt",
		ports.ReceiptPayout:  "Transfer receipt",
	},
	pixTitles: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Pix payment receipt",
		ports.ReceiptRefund:  "Pix refund receipt",
		ports.ReceiptPayout:  "Pix transfer receipt",
	},
	amount: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Amount paid",
		ports.ReceiptRefund:  "Amount refunded",
		ports.ReceiptPayout:  "Amount transferred",
	},
	to: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Payee",
		ports.ReceiptRefund:  "Refunded to",
		ports.ReceiptPayout:  "To",
	},
	from: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Payer",
		ports.ReceiptRefund:  "Refunded by",
		ports.ReceiptPayout:  "From",
	},
	description: map[ports.ReceiptKind]string{
		ports.ReceiptPayment: "Description",
		ports.ReceiptRefund:  "Reason",
		ports.ReceiptPayout:  "Description",
	},
	reference: map[ports.ReceiptKind]string{
		ports.ReceiptRefund: "Refund ID",
		ports.ReceiptPayout: "Transfer ID",
	},
	methods: map[domain.Method]string{
		domain.MethodPix: "Pix", domain.MethodCreditCard: "Credit card", domain.MethodBoleto: "Boleto",
		domain.MethodMultibanco: "Multibanco", domain.MethodMBWay: "MB WAY", domain.MethodCrypto: "Crypto",
	},
	strategies: map[domain.RefundStrategy]string{
		domain.StrategyDevolution: "Return of the original Pix",
		domain.StrategyCashout:    "New Pix (cashout)",
	},
	refundRoute:      "Refund route",
	dueDate:          "Due date",
	original:         "Original amount",
	abatement:        "Rebate",
	discount:         "Discount",
	fine:             "Fine",
	interest:         "Interest",
	dateTime:         "Date and time",
	method:           "Payment method",
	fee:              "Fee",
	pixKey:           "Pix key",
	name:             "Name",
	document:         "CPF/CNPJ",
	institution:      "Institution",
	transaction:      "Transaction ID",
	endToEnd:         "End-to-end ID (E2E)",
	originalEndToEnd: "Original payment E2E",
	txid:             "Identifier (txid)",
	details:          "Identification",
	testMode:         "TEST MODE: NO MONEY MOVED",
	footer:           "Documents are masked the way the Banco Central shows the parties of a Pix.",
	issuedBy:         "Issued by Quita on %s.",
	notKnown:         "Not disclosed",
	dateLayout:       "Jan 2, 2006, 15:04:05",
	timeZone:         "Brasília time",
}

func labelsFor(loc domain.Locale) *labels {
	if loc == domain.LocaleEN {
		return &english
	}
	return &portuguese
}
