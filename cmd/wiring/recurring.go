package wiring

import (
	"github.com/quitapix/quita/adapters/acquirer/bcbpix"
	"github.com/quitapix/quita/adapters/httpapi"
	"github.com/quitapix/quita/app"
)

// provideRecurringCallbacks makes the subscription service the receiver of
// the API Pix adapter's Pix Automático callbacks, which the PSP posts to
// quitad's /rec and /cobr routes.
func provideRecurringCallbacks(live *bcbpix.Acquirer, subs *app.SubscriptionService) httpapi.RecurringCallbacks {
	live.SetRecurringNotifications(subs)
	return live
}
