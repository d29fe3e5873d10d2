//go:build wireinject

package wiring

import (
	"context"
	"log/slog"

	"github.com/google/wire"

	"github.com/quitapix/quita/ports"
)

// InitializeApp wires quitad from its configuration.
func InitializeApp(ctx context.Context, cfg Config, log *slog.Logger) (*App, func(), error) {
	wire.Build(
		storeSet, acquirerSet, bcbpixSet, clockSet, appSet,
		provideRedis, provideCache, provideCobIntents, provideExactlyOnce, provideKeyedWrites, provideLinks, provideQR, provideHandler, checkoutSet, dashboardSet, webhookSet,
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}

// InitializeWith wires Quita around a given clock, acquirer and payment
// simulator: tests and the merchant test kit pass fakes (or a sandbox they
// control) here.
func InitializeWith(ctx context.Context, cfg Config, log *slog.Logger, clock ports.Clock, acquirer ports.Acquirer, sim ports.PaymentSimulator) (*App, func(), error) {
	wire.Build(
		storeSet, appSet, bcbpixSet,
		provideRedis, provideCache, provideCobIntents, provideExactlyOnce, provideKeyedWrites, provideLinks, provideQR, provideHandler, checkoutSet, dashboardSet, webhookSet,
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}
