package httpapi

import (
	"errors"
	"fmt"
	"net/http"
	"strings"

	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/domain"
)

// actAsHeader names the account a platform's key acts for.
const actAsHeader = "Quita-Account"

// classifyMarketplace maps the errors of sub-accounts, acting for them and
// splits; nil for any other error.
func classifyMarketplace(params wireParams, err error) *apiError {
	var sa *domain.SplitAccountError
	switch {
	case errors.As(err, &sa):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "split_account_invalid",
			Message: "each of " + params.name(domain.FieldSplits) + " must name a live sub-account of this account",
			Param:   strings.Replace(params.name(domain.FieldSplitAccount), "[]", fmt.Sprintf("[%d]", sa.Index), 1)}
	case errors.Is(err, domain.ErrSplitReversalInvalid):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "split_reversal_invalid",
			Message: "each of reverseSplits must name one of the payment's splits with at most what its share has left, and together at most the refund's amount",
			Param:   "reverseSplits"}
	case errors.Is(err, app.ErrSubaccountNested):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "subaccount_nested",
			Message: "a sub-account cannot create sub-accounts: create them with the platform's own scope (no Quita-Account header)"}
	case errors.Is(err, domain.ErrSubaccountDisabled):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "subaccount_disabled",
			Message: "the sub-account is disabled: it cannot be changed"}
	case errors.Is(err, app.ErrActAsForbidden):
		return &apiError{Status: http.StatusForbidden, Type: typePermission, Code: "account_header_not_allowed",
			Message: "only a platform's key may act for another account with " + actAsHeader, Param: actAsHeader}
	case errors.Is(err, app.ErrActAsDisabled):
		return &apiError{Status: http.StatusForbidden, Type: typePermission, Code: "subaccount_disabled",
			Message: "the sub-account named in " + actAsHeader + " is disabled", Param: actAsHeader}
	case errors.Is(err, app.ErrTransferDestinationUnknown):
		return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "account_not_found",
			Message: "destination is not a sub-account of this account nor its platform", Param: "destination"}
	case errors.Is(err, app.ErrTransferDestinationDisabled):
		return &apiError{Status: http.StatusConflict, Type: typeInvalidRequest, Code: "subaccount_disabled",
			Message: "the destination sub-account is disabled", Param: "destination"}
	case errors.Is(err, domain.ErrTransferToSelf):
		return badRequest("destination", "parameter_invalid", "destination is the account the money would leave")
	case errors.Is(err, app.ErrTransferExceedsAvailable):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "insufficient_balance",
			Message: "the available balance cannot cover this transfer", Param: "amount"}
	case errors.Is(err, app.ErrPayoutNoDefaultKey):
		return &apiError{Status: http.StatusUnprocessableEntity, Type: typeInvalidRequest, Code: "payout_pix_key_missing",
			Message: "the sub-account has no payout_pix_key: name destination.pix_key, or set the sub-account's payout_pix_key",
			Param:   "destination"}
	case errors.Is(err, errActAsUnknown):
		return &apiError{Status: http.StatusNotFound, Type: typeInvalidRequest, Code: "account_not_found",
			Message: actAsHeader + " does not name a sub-account of this account", Param: actAsHeader}
	}
	return nil
}

// errActAsUnknown: Quita-Account named no sub-account of the key's account
// (another platform's account or none: the answer is the same).
var errActAsUnknown = errors.New("no such sub-account")
