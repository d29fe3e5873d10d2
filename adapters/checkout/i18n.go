package checkout

import (
	"strconv"
	"strings"
)

// Languages the page speaks, as BCP 47 tags for <html lang>.
const (
	LangPortuguese = "pt-BR"
	LangEnglish    = "en"
)

// NegotiateLanguage picks the page language from an Accept-Language
// header: English when the payer prefers it over Portuguese, Brazilian
// Portuguese otherwise (the default, also for a missing or unparsable
// header). Weights follow RFC 9110; ties go to the first listed.
func NegotiateLanguage(header string) string {
	best, bestQ := LangPortuguese, -1.0
	for part := range strings.SplitSeq(header, ",") {
		tag, params, _ := strings.Cut(strings.TrimSpace(part), ";")
		tag = strings.ToLower(strings.TrimSpace(tag))
		q := 1.0
		for p := range strings.SplitSeq(params, ";") {
			k, v, ok := strings.Cut(strings.TrimSpace(p), "=")
			if ok && strings.TrimSpace(k) == "q" {
				// q is a weight between 0 and 1, not money: a float is right.
				f, err := strconv.ParseFloat(strings.TrimSpace(v), 64)
				if err != nil || f < 0 || f > 1 {
					f = 0
				}
				q = f
			}
		}
		if q <= 0 {
			continue
		}
		var lang string
		switch {
		case tag == "pt" || strings.HasPrefix(tag, "pt-"):
			lang = LangPortuguese
		case tag == "en" || strings.HasPrefix(tag, "en-"):
			lang = LangEnglish
		default:
			continue
		}
		if q > bestQ {
			best, bestQ = lang, q
		}
	}
	return best
}

// stateText is what the page says in one charge state.
type stateText struct {
	Title string
	Body  string
}

// messages is every string on the page in one language.
type messages struct {
	Lang      string
	Other     string // the other language's name, for the switch link
	OtherLang string
	PayTitle  string // title while pending, before the amount
	PayTo     string
	TestMode  string
	ExpiresIn string
	PayBy     string
	// A due-date charge's lines: its due date, the last day it can be
	// paid, and what today's amount is made of.
	DueOn, PayUntil, AmountToday                   string
	DueOriginal, DueFine, DueInterest, DueDiscount string
	DueAbatement                                   string
	BrasiliaTime                                   string
	CodeLabel                                      string
	CodeHint                                       string
	CopyButton                                     string
	Copied                                         string
	CopiedAnnounce                                 string
	CopyFailed                                     string
	QRCaption                                      string
	QRAlt                                          string // format: amount, merchant
	HowTitle                                       string
	Steps                                          []string
	NoScript                                       string
	Footer                                         string
	Unavailable                                    string
	NoMethod                                       string
	StatusRegion                                   string
	States                                         map[string]stateText
	NotFoundTitle                                  string
	NotFoundBody                                   string
	ErrorTitle                                     string
	ErrorBody                                      string
	ExpiredCounting                                string
	// TimeUpNote replaces the ways to pay once the deadline has passed,
	// while the charge still waits for news of a payment made in time.
	TimeUpNote string

	// Several methods.
	PayTitleAny  string // title while pending when not Pix-only
	FooterAny    string
	StatesAny    map[string]stateText
	ChooseMethod string
	MethodNames  map[string]string
	Preparing    string
	MethodGone   string
	// Boleto.
	BoletoLine    string
	BoletoHint    string
	BoletoCopy    string
	BoletoCopied  string
	BoletoBarcode string
	BoletoPDF     string
	BoletoDue     string
	// Multibanco.
	MBIntro     string
	MBEntity    string
	MBReference string
	MBAmount    string
	MBDue       string
	// MB WAY: format: the phone's last digits.
	MBWayNote string
	// Card.
	CardIntro  string
	CardButton string
	// Crypto.
	CryptoIntro   string
	CryptoAddress string
	CryptoCopy    string
	CryptoCopied  string
	CryptoNetwork string
	CryptoAmount  string
	CryptoWarn    string
	// The sandbox card screen.
	CardTitle   string
	CardBody    string
	CardNumber  string
	CardApprove string
	CardDecline string
	CardBack    string
	CardClosed  string
	CardFailed  string
}

var catalog = map[string]*messages{
	LangPortuguese: {
		Lang:           LangPortuguese,
		Other:          "English",
		OtherLang:      LangEnglish,
		PayTitle:       "Pague com Pix",
		PayTo:          "Pagamento para",
		TestMode:       "Modo de teste: nenhum dinheiro real é movimentado.",
		ExpiresIn:      "Expira em",
		PayBy:          "Pague até",
		DueOn:          "Vencimento",
		PayUntil:       "Pode ser paga até",
		AmountToday:    "Valor para pagamento hoje",
		DueOriginal:    "Valor original",
		DueFine:        "Multa",
		DueInterest:    "Juros",
		DueDiscount:    "Desconto",
		DueAbatement:   "Abatimento",
		BrasiliaTime:   "(horário de Brasília)",
		CodeLabel:      "Pix copia e cola",
		CodeHint:       "Copie o código e cole no app do seu banco, na opção Pix copia e cola.",
		CopyButton:     "Copiar código Pix",
		Copied:         "Código copiado!",
		CopiedAnnounce: "Código Pix copiado. Agora cole no app do seu banco.",
		CopyFailed:     "Não foi possível copiar. Selecione o código acima e copie manualmente.",
		QRCaption:      "Ou escaneie o QR Code com o app do seu banco",
		QRAlt:          "QR Code Pix para pagar %s a %s",
		HowTitle:       "Como pagar",
		Steps: []string{
			"Abra o app do seu banco e entre na área Pix.",
			"Escolha Pix copia e cola e cole o código, ou leia o QR Code com a câmera.",
			"Confira o valor e o recebedor e confirme. Esta página se atualiza sozinha.",
		},
		NoScript:     "Depois de pagar, atualize esta página para ver a confirmação.",
		Footer:       "Pagamento seguro via Pix, processado por Quita.",
		Unavailable:  "O Pix desta cobrança não está disponível. Fale com a loja para gerar uma nova cobrança.",
		NoMethod:     "A forma de pagamento desta cobrança ainda não pode ser paga por esta página. Fale com a loja.",
		StatusRegion: "Situação do pagamento",
		States: map[string]stateText{
			"paid":       {"Pagamento confirmado", "Recebemos o seu Pix. Você já pode fechar esta página."},
			"processing": {"Pagamento em análise", "Recebemos o seu Pix e ele está em análise. A loja vai avisar você quando a análise terminar."},
			"expired":    {"Este Pix expirou", "O prazo para pagar terminou e nenhum valor foi cobrado. Peça à loja um novo código Pix."},
			"cancelled":  {"Cobrança cancelada", "Esta cobrança foi cancelada pela loja e não pode mais ser paga. Nenhum valor foi cobrado."},
			"refunded":   {"Pagamento devolvido", "O valor deste pagamento foi devolvido para a conta de origem. Em caso de dúvida, fale com a loja."},
			"failed":     {"Pagamento não concluído", "Não foi possível concluir esta cobrança. Fale com a loja para tentar de novo."},
			"disputed":   {"Pagamento em contestação", "Este pagamento está sendo contestado. A loja vai entrar em contato."},
		},
		NotFoundTitle:   "Cobrança não encontrada",
		NotFoundBody:    "Confira se o link está completo ou peça à loja um novo link de pagamento.",
		ErrorTitle:      "Algo deu errado",
		ErrorBody:       "Não conseguimos carregar esta cobrança agora. Tente de novo em alguns instantes.",
		ExpiredCounting: "Prazo encerrado",
		TimeUpNote:      "Se você pagou antes do prazo, estamos confirmando o pagamento. Não pague de novo: esta página se atualiza sozinha.",
		PayTitleAny:     "Pagamento",
		FooterAny:       "Pagamento seguro, processado por Quita.",
		StatesAny: map[string]stateText{
			"paid":       {"Pagamento confirmado", "Recebemos o seu pagamento. Você já pode fechar esta página."},
			"processing": {"Pagamento em análise", "Recebemos o seu pagamento e ele está em análise. A loja vai avisar você quando a análise terminar."},
			"expired":    {"Esta cobrança expirou", "O prazo para pagar terminou e nenhum valor foi cobrado. Peça à loja uma nova cobrança."},
			"failed":     {"Pagamento não concluído", "O pagamento foi recusado e nenhum valor foi cobrado. Fale com a loja para tentar de novo."},
		},
		ChooseMethod: "Como você quer pagar?",
		MethodNames: map[string]string{
			"pix": "Pix", "boleto": "Boleto", "multibanco": "Multibanco", "mbway": "MB WAY",
			"card": "Cartão de crédito", "crypto": "Cripto",
		},
		Preparing:     "Preparando os dados de pagamento…",
		MethodGone:    "Esta forma de pagamento não está disponível agora. Escolha outra ou fale com a loja.",
		BoletoLine:    "Linha digitável",
		BoletoHint:    "Copie a linha e pague no app do seu banco, em Pagar boleto.",
		BoletoCopy:    "Copiar linha digitável",
		BoletoCopied:  "Linha copiada!",
		BoletoBarcode: "Código de barras",
		BoletoPDF:     "Baixar boleto (PDF)",
		BoletoDue:     "Vencimento",
		MBIntro:       "Pague num caixa Multibanco ou no homebanking, em Pagamentos de serviços.",
		MBEntity:      "Entidade",
		MBReference:   "Referência",
		MBAmount:      "Montante",
		MBDue:         "Válida até",
		MBWayNote:     "Enviamos o pedido de pagamento para o app MB WAY do telemóvel terminado em %s. Abra o app e confirme.",
		CardIntro:     "Pague com cartão de crédito numa página segura.",
		CardButton:    "Pagar com cartão",
		CryptoIntro:   "Envie exatamente o valor abaixo para este endereço, na rede indicada.",
		CryptoAddress: "Endereço",
		CryptoCopy:    "Copiar endereço",
		CryptoCopied:  "Endereço copiado!",
		CryptoNetwork: "Rede",
		CryptoAmount:  "Valor exato",
		CryptoWarn:    "Enviar por outra rede ou outro valor pode causar a perda dos fundos.",
		CardTitle:     "Cartão de teste",
		CardBody:      "Esta é a tela de cartão do sandbox: nenhum cartão real é pedido nem cobrado. Escolha o resultado do pagamento.",
		CardNumber:    "Cartão de teste",
		CardApprove:   "Aprovar pagamento",
		CardDecline:   "Recusar pagamento",
		CardBack:      "Voltar para o pagamento",
		CardClosed:    "Esta cobrança não está mais aguardando pagamento.",
		CardFailed:    "Não foi possível registrar a resposta. Tente de novo.",
	},
	LangEnglish: {
		Lang:           LangEnglish,
		Other:          "Português",
		OtherLang:      LangPortuguese,
		PayTitle:       "Pay with Pix",
		PayTo:          "Payment to",
		TestMode:       "Test mode: no real money moves.",
		ExpiresIn:      "Expires in",
		PayBy:          "Pay by",
		DueOn:          "Due",
		PayUntil:       "Can be paid until",
		AmountToday:    "Amount to pay today",
		DueOriginal:    "Original amount",
		DueFine:        "Fine",
		DueInterest:    "Interest",
		DueDiscount:    "Discount",
		DueAbatement:   "Rebate",
		BrasiliaTime:   "(Brasília time)",
		CodeLabel:      "Pix copy and paste code",
		CodeHint:       "Copy the code and paste it in your bank app under Pix copy and paste (Pix copia e cola).",
		CopyButton:     "Copy Pix code",
		Copied:         "Code copied!",
		CopiedAnnounce: "Pix code copied. Now paste it in your bank app.",
		CopyFailed:     "Could not copy. Select the code above and copy it by hand.",
		QRCaption:      "Or scan the QR code with your bank app",
		QRAlt:          "Pix QR code to pay %s to %s",
		HowTitle:       "How to pay",
		Steps: []string{
			"Open your bank app and go to Pix.",
			"Choose Pix copy and paste and paste the code, or scan the QR code with the camera.",
			"Check the amount and the recipient, then confirm. This page updates by itself.",
		},
		NoScript:     "After paying, reload this page to see the confirmation.",
		Footer:       "Secure Pix payment, processed by Quita.",
		Unavailable:  "Pix is not available for this charge. Ask the store for a new one.",
		NoMethod:     "This charge's payment method cannot be paid on this page yet. Please contact the store.",
		StatusRegion: "Payment status",
		States: map[string]stateText{
			"paid":       {"Payment confirmed", "We received your Pix. You can close this page."},
			"processing": {"Payment under review", "We received your Pix and it is under review. The store will let you know when it is done."},
			"expired":    {"This Pix has expired", "The time to pay is over and nothing was charged. Ask the store for a new Pix code."},
			"cancelled":  {"Charge cancelled", "The store cancelled this charge; it can no longer be paid. Nothing was charged."},
			"refunded":   {"Payment returned", "This payment was returned to the account it came from. If in doubt, contact the store."},
			"failed":     {"Payment not completed", "This charge could not be completed. Contact the store to try again."},
			"disputed":   {"Payment disputed", "This payment is being disputed. The store will contact you."},
		},
		NotFoundTitle:   "Charge not found",
		NotFoundBody:    "Check that the link is complete, or ask the store for a new payment link.",
		ErrorTitle:      "Something went wrong",
		ErrorBody:       "We could not load this charge right now. Please try again in a moment.",
		ExpiredCounting: "Time is up",
		TimeUpNote:      "If you paid before the deadline, we are confirming your payment. Do not pay again: this page updates by itself.",
		PayTitleAny:     "Payment",
		FooterAny:       "Secure payment, processed by Quita.",
		StatesAny: map[string]stateText{
			"paid":       {"Payment confirmed", "We received your payment. You can close this page."},
			"processing": {"Payment under review", "We received your payment and it is under review. The store will let you know when it is done."},
			"expired":    {"This charge has expired", "The time to pay is over and nothing was charged. Ask the store for a new charge."},
			"failed":     {"Payment not completed", "The payment was declined and nothing was charged. Contact the store to try again."},
		},
		ChooseMethod: "How do you want to pay?",
		MethodNames: map[string]string{
			"pix": "Pix", "boleto": "Boleto", "multibanco": "Multibanco", "mbway": "MB WAY",
			"card": "Credit card", "crypto": "Crypto",
		},
		Preparing:     "Preparing the payment details…",
		MethodGone:    "This payment method is not available right now. Choose another one or contact the store.",
		BoletoLine:    "Digitable line",
		BoletoHint:    "Copy the line and pay it in your bank app, under Pay a boleto.",
		BoletoCopy:    "Copy digitable line",
		BoletoCopied:  "Line copied!",
		BoletoBarcode: "Barcode",
		BoletoPDF:     "Download boleto (PDF)",
		BoletoDue:     "Due date",
		MBIntro:       "Pay at a Multibanco ATM or in your home banking, under Service payments.",
		MBEntity:      "Entity",
		MBReference:   "Reference",
		MBAmount:      "Amount",
		MBDue:         "Valid until",
		MBWayNote:     "We sent the payment request to the MB WAY app on the phone ending in %s. Open the app and confirm.",
		CardIntro:     "Pay by credit card on a secure page.",
		CardButton:    "Pay by card",
		CryptoIntro:   "Send exactly the amount below to this address, on the network shown.",
		CryptoAddress: "Address",
		CryptoCopy:    "Copy address",
		CryptoCopied:  "Address copied!",
		CryptoNetwork: "Network",
		CryptoAmount:  "Exact amount",
		CryptoWarn:    "Sending on another network or another amount may lose the funds.",
		CardTitle:     "Test card",
		CardBody:      "This is the sandbox card screen: no real card is asked for or charged. Choose how the payment ends.",
		CardNumber:    "Test card",
		CardApprove:   "Approve payment",
		CardDecline:   "Decline payment",
		CardBack:      "Back to the payment",
		CardClosed:    "This charge is no longer awaiting payment.",
		CardFailed:    "Could not record the answer. Please try again.",
	},
}
