package dashboard

import (
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
)

func TestParseAmount(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]int64{
		"1234,56": 123456, "1.234,56": 123456, "1234.56": 123456, "1,234.56": 123456, "R$ 12": 1200, "12": 1200,
		"0,5": 50, "1.000": 100000, "1.000.000,01": 100000001, " 7,00 ": 700, ",50": 50,
	} {
		if got, ok := parseAmount(in); !ok || got != want {
			t.Errorf("parseAmount(%q) = %d, %v; want %d", in, got, ok, want)
		}
	}
	for _, in := range []string{"", "abc", "1,2,3x", "-5", "1e3", "99999999999999999999", "12,345x"} {
		if got, ok := parseAmount(in); ok {
			t.Errorf("parseAmount(%q) = %d, want refused", in, got)
		}
	}
	// What the field shows, parses back to the same amount.
	for _, minor := range []int64{0, 5, 100, 123456, 100000001} {
		for _, lang := range []string{langPT, langEN} {
			if got, ok := parseAmount(amountInput(minor, lang)); !ok || got != minor {
				t.Errorf("%s round trip of %d: %q → %d", lang, minor, amountInput(minor, lang), got)
			}
		}
	}
}

func TestTimesInSaoPaulo(t *testing.T) {
	t.Parallel()
	at := time.Date(2026, 11, 24, 2, 30, 0, 0, time.UTC)
	if got := when(at, langPT); got != "23/11/2026 23:30:00" {
		t.Errorf("pt-BR %q", got)
	}
	if got := when(at, langEN); got != "23 Nov 2026 23:30:00" {
		t.Errorf("en %q", got)
	}
	d, ok := parseDay("2026-11-24")
	if !ok || !d.Equal(time.Date(2026, 11, 24, 3, 0, 0, 0, time.UTC)) {
		t.Errorf("parseDay: %v %v", d, ok)
	}
}

// Every message the templates and handlers use exists in both languages,
// and both languages have the same keys.
func TestMessagesComplete(t *testing.T) {
	t.Parallel()
	for k := range messages[langPT] {
		if _, ok := messages[langEN][k]; !ok {
			t.Errorf("%q has no English", k)
		}
	}
	for k := range messages[langEN] {
		if _, ok := messages[langPT][k]; !ok {
			t.Errorf("%q has no Portuguese", k)
		}
	}
	used := map[string]bool{}
	entries, _ := assetFS.ReadDir("assets")
	for _, e := range entries {
		b, _ := assetFS.ReadFile("assets/" + e.Name())
		for _, m := range regexp.MustCompile(`\.T\.([a-zA-Z0-9_]+)`).FindAllStringSubmatch(string(b), -1) {
			used[m[1]] = true
		}
	}
	for _, p := range pageNames {
		used["nav_"+p] = true
	}
	for _, st := range domain.TxStatuses {
		used["st_"+string(st)] = true
	}
	for _, st := range domain.DeliveryStatuses {
		used["dl_"+string(st)] = true
	}
	for _, st := range []domain.RefundStatus{domain.RefundPending, domain.RefundInProgress, domain.RefundRefunded, domain.RefundFailed} {
		used["rf_"+string(st)] = true
	}
	for _, k := range []string{"ep_ACTIVE", "ep_INACTIVE", "secret_title_key", "secret_title_endpoint", "sub_variable", "sub_variable_upto"} {
		used[k] = true
	}
	for _, st := range subscriptionStatuses {
		used["sub_st_"+string(st)] = true
	}
	for _, by := range []domain.CancelledBy{domain.CancelledByMerchant, domain.CancelledByPayer} {
		used["sub_st_cancelled_"+string(by)] = true
	}
	for _, iv := range []domain.Interval{domain.IntervalWeekly, domain.IntervalMonthly, domain.IntervalQuarterly, domain.IntervalSemiannual, domain.IntervalYearly} {
		used["iv_"+string(iv)] = true
	}
	for _, p := range []domain.RetryPolicy{domain.RetryNone, domain.RetryThreeInSevenDays} {
		used["rp_"+string(p)] = true
	}
	for _, st := range []string{domain.SubaccountActive, domain.SubaccountDisabled} {
		used["sa_st_"+st] = true
	}
	for _, st := range []string{domain.InvitationPending, domain.InvitationAccepted, domain.InvitationExpired} {
		used["inv_st_"+st] = true
	}
	for _, st := range []string{domain.SplitPending, domain.SplitPaid, domain.SplitCancelled} {
		used["sp_st_"+st] = true
	}
	for _, fp := range []domain.FeePayer{domain.FeePayerPlatform, domain.FeePayerProportional} {
		used["sp_fee_"+string(fp)] = true
	}
	for _, k := range []string{"invite_mismatch", "invite_password", "invite_email_taken", "err_subaccount_name", "err_subaccount_document",
		"err_subaccount_email", "err_subaccount_pix_key", "err_subaccount_invalid", "err_subaccount_confirm", "err_invite_email",
		"err_invite_disabled", "err_invite_unknown", "err_invite_used", "err_invite_expired", "err_invite_subaccount_disabled",
		"done_subaccount_created", "done_subaccount_disabled", "done_invite_accepted"} {
		used[k] = true
	}
	for _, j := range []domain.Journey{domain.JourneyAuthorizationRequest, domain.JourneyQRCode, domain.JourneyQRCodeWithFirstPayment} {
		used["jn_"+string(j)] = true
	}
	for _, st := range []domain.CycleStatus{domain.CycleScheduled, domain.CycleRetrying, domain.CyclePaid, domain.CycleFailed, domain.CycleCancelled} {
		used["cy_"+string(st)] = true
	}
	// The err_ and done_ keys the handlers name.
	for _, k := range []string{"err_code_missing", "err_code_invalid", "err_code_throttled", "sec_agent_unknown", "sec_seen_now"} {
		used[k] = true
	}
	for _, src := range []string{"pages.go", "pages_settings.go", "pages_payouts.go", "pages_subscriptions.go", "pages_security.go", "auth.go",
		"auth_code.go", "render.go"} {
		b, err := readSource(src)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range regexp.MustCompile(`back\(w, r, [^,]+, "(err|done)", "([a-z_]+)"\)`).FindAllStringSubmatch(b, -1) {
			used[m[1]+"_"+m[2]] = true
		}
		for _, m := range regexp.MustCompile(`"((?:err|login)_[a-z_]+)"`).FindAllStringSubmatch(b, -1) {
			if !strings.HasSuffix(m[1], "_") {
				used[m[1]] = true
			}
		}
	}
	for k := range used {
		for _, lang := range []string{langPT, langEN} {
			if messages[lang][k] == "" {
				t.Errorf("%s lacks %q", lang, k)
			}
		}
	}
}

func TestOtherModePath(t *testing.T) {
	t.Parallel()
	for in, want := range map[string]string{
		"/dashboard/live/":                                                     "/dashboard/test/",
		"/dashboard/live/charges":                                              "/dashboard/test/charges",
		"/dashboard/live/charges/ch_abc":                                       "/dashboard/test/charges",
		"/dashboard/live/webhooks":                                             "/dashboard/test/webhooks",
		"/dashboard/live/subscriptions/sub_abc":                                "/dashboard/test/subscriptions",
		"/dashboard/live/deliveries/x/yz":                                      "/dashboard/test/",
		"/dashboard/live/subaccounts":                                          "/dashboard/test/subaccounts",
		"/dashboard/live/subaccounts/acct_3oddh7pwqb3umyehf4gfjkc4yo7ykum4oeq": "/dashboard/test/subaccounts/acct_3oddh7pwqb3umyehf4gfjkc4yo7ykum4oeq",
		"/dashboard/live/subaccounts/acct_3oddh7pwqb3umyehf4gfjkc4yo7ykum4oeq/invitations": "/dashboard/test/subaccounts/acct_3oddh7pwqb3umyehf4gfjkc4yo7ykum4oeq",
		"/dashboard/live/subaccounts/nope":                                                 "/dashboard/test/subaccounts",
		"/dashboard/live/security/totp":                                                    "/dashboard/test/security",
	} {
		if got := otherModePath(in, domain.ModeLive, domain.ModeTest); got != want {
			t.Errorf("%s → %s, want %s", in, got, want)
		}
	}
}
