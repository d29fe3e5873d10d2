package domain

// Field names an input that a validation rule is about, in no wire format's
// vocabulary: the values read as plain words so that logs stay readable, and
// adapters translate every Field to their own parameter names. Add a Field
// with its translations in each adapter; never reuse one for a different
// input.
type Field string

// The inputs a ValidationError can name.
const (
	FieldID               Field = "charge identity"
	FieldAmount           Field = "amount"
	FieldCurrency         Field = "currency"
	FieldPaymentMethod    Field = "payment methods"
	FieldDescription      Field = "description"
	FieldExpiresIn        Field = "expiry"
	FieldCustomerName     Field = "customer name"
	FieldCustomerDocument Field = "customer document"
	FieldCustomerEmail    Field = "customer email"
	FieldCustomerPhone    Field = "customer phone"
	FieldExpectedPayer    Field = "expected payer tax id"
	FieldMetadata         Field = "metadata"
	FieldMetadataPhone    Field = "metadata phone"
	FieldPayment          Field = "pix payment"
	FieldStatus           Field = "status"
	FieldPaidWith         Field = "paid with"
	FieldRefundStrategy   Field = "refund strategy"
	FieldPayerDocument    Field = "payer document"
	FieldSortBy           Field = "sort order"
	FieldWebhookURL       Field = "webhook url"
	FieldEvents           Field = "webhook events"
	FieldAccountName      Field = "account name"
	FieldAccountEmail     Field = "account email"
	FieldPassword         Field = "password"
	FieldSessionLabel     Field = "session label"
	FieldGuardSettings    Field = "guard settings"
	FieldBlockedDocument  Field = "blocked document"
	FieldFeeMethod        Field = "fee method"
	FieldFee              Field = "fee"
	FieldAccountDocument  Field = "account document"
	FieldLang             Field = "language"
	FieldPixKey           Field = "pix key"
	FieldPixKeyType       Field = "pix key type"
	FieldFailureCode      Field = "failure code"
	FieldRefundKey        Field = "refund destination key"
	FieldCustomerRef      Field = "customer id"
	FieldDisputeReason    Field = "dispute reason"
	FieldPayerName        Field = "payer name"
	FieldDueDate          Field = "due date"
	FieldDaysAfterDue     Field = "days after due"
	FieldFine             Field = "fine"
	FieldInterest         Field = "interest"
	FieldDiscount         Field = "discount"
	FieldDiscountUntil    Field = "discount dates"
	FieldAbatement        Field = "abatement"
	FieldPaymentDate      Field = "payment date"
	FieldInterval         Field = "interval"
	FieldStartDate        Field = "start date"
	FieldEndDate          Field = "end date"
	FieldContract         Field = "contract"
	FieldRetryPolicy      Field = "retry policy"
	FieldJourney          Field = "authorization journey"
	FieldVariable         Field = "variable amount"
	FieldMaxAmount        Field = "maximum amount"
	FieldFirstPayment     Field = "first payment amount"
	FieldPayerAccount     Field = "payer's account"
	FieldPayerISPB        Field = "payer's bank ISPB"
	FieldPayerBranch      Field = "payer's branch"
	FieldPayerNumber      Field = "payer's account number"
	FieldSubaccountDoc    Field = "sub-account document"
	FieldSubaccountPixKey Field = "sub-account payout pix key"
	FieldSplits           Field = "splits"
	FieldSplitAccount     Field = "split account"
	FieldSplitAmount      Field = "split amount"
	FieldSplitPercent     Field = "split percent"
	FieldFeePayer         Field = "fee payer"
	// FieldTransferDest is the account a transfer credits.
	FieldTransferDest Field = "transfer destination"
	// FieldAutoPayout is a sub-account's automatic daily payout switch.
	FieldAutoPayout Field = "automatic payout"
)

// Fields lists every Field, so adapters can prove their translation tables
// complete.
var Fields = []Field{
	FieldID, FieldAmount, FieldCurrency, FieldPaymentMethod, FieldDescription, FieldExpiresIn,
	FieldCustomerName, FieldCustomerDocument, FieldCustomerEmail, FieldCustomerPhone, FieldExpectedPayer,
	FieldMetadata, FieldMetadataPhone, FieldPayment, FieldStatus, FieldPaidWith, FieldRefundStrategy,
	FieldPayerDocument, FieldSortBy, FieldWebhookURL, FieldEvents, FieldAccountName, FieldAccountEmail,
	FieldPassword, FieldSessionLabel, FieldGuardSettings, FieldBlockedDocument, FieldFeeMethod, FieldFee,
	FieldAccountDocument, FieldLang,
	FieldPixKey, FieldPixKeyType, FieldFailureCode, FieldRefundKey, FieldCustomerRef,
	FieldDisputeReason, FieldPayerName,
	FieldDueDate, FieldDaysAfterDue, FieldFine, FieldInterest, FieldDiscount, FieldDiscountUntil, FieldAbatement,
	FieldPaymentDate,
	FieldInterval, FieldStartDate, FieldEndDate, FieldContract, FieldRetryPolicy, FieldJourney,
	FieldVariable, FieldMaxAmount, FieldFirstPayment,
	FieldPayerAccount, FieldPayerISPB, FieldPayerBranch, FieldPayerNumber,
	FieldSubaccountDoc, FieldSubaccountPixKey, FieldSplits, FieldSplitAccount, FieldSplitAmount, FieldSplitPercent, FieldFeePayer,
	FieldTransferDest, FieldAutoPayout,
}
