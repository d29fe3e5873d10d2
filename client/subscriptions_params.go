package client

// SubscriptionCustomer is the payer a mandate names.
type SubscriptionCustomer struct {
	Name     string `json:"name"`
	Document string `json:"document"`
}

// VariableParams bound a variable subscription's cycle amounts.
type VariableParams struct {
	MaxAmount int64 `json:"max_amount,omitempty"`
}

// FirstPaymentParams is the amount paid with the authorisation.
type FirstPaymentParams struct {
	Amount int64 `json:"amount"`
}

// PayerAccountParams is the payer's account at their bank: ISPB 8
// characters of 0-9 and A-Z, Branch 1–4 digits, Number 1–20 digits.
type PayerAccountParams struct {
	ISPB   string `json:"ispb"`
	Branch string `json:"branch"`
	Number string `json:"number"`
}

// PayerAccount is the payer's account as a subscription shows it: the
// number reduced to its last four digits.
type PayerAccount struct {
	ISPB        string `json:"ispb"`
	Branch      string `json:"branch"`
	NumberLast4 string `json:"number_last4"`
}
