package wiring

import (
	"github.com/google/wire"

	"github.com/quitapix/quita/adapters/store"
	"github.com/quitapix/quita/adapters/webhook"
	"github.com/quitapix/quita/app"
	"github.com/quitapix/quita/ports"
)

// webhookSet is webhook delivery: the HTTP sender with its SSRF-safe
// dialer, the URL guard and the service (the store's webhook ports are
// bound in storeSet).
//
//lint:ignore U1000 used by the injectors in wire.go (build tag wireinject).
var webhookSet = wire.NewSet(
	provideWebhookPolicy,
	webhook.NewSender,
	webhook.NewGuard,
	wire.Bind(new(ports.WebhookSender), new(*webhook.Sender)),
	wire.Bind(new(ports.URLGuard), new(*webhook.Guard)),
	provideWebhooksConfig,
	app.NewWebhookService,
)

func provideWebhookPolicy(cfg Config) webhook.Policy {
	return webhook.Policy{AllowPrivate: cfg.WebhookAllowPrivate}
}

// provideWebhooksConfig wakes the dispatcher when events commit (in this
// process or, on Postgres, another), so it need not poll often.
func provideWebhooksConfig(cfg Config, db *store.DB) app.WebhooksConfig {
	wc := cfg.Webhooks
	if wc.EventsCommitted == nil {
		wc.EventsCommitted = db.Wake(store.SignalEvents)
	}
	return wc
}

// provideEventsConfig wakes the events API's long-polls when events commit
// (in this process or, on Postgres, another).
func provideEventsConfig(db *store.DB) app.EventsConfig {
	return app.EventsConfig{EventsCommitted: db.Wake(store.SignalEvents)}
}
