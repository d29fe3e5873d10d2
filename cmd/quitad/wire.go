//go:build wireinject

package main

import (
	"context"
	"log/slog"

	"github.com/google/wire"
)

// initializeApp wires quitad from its configuration.
func initializeApp(ctx context.Context, cfg Config, log *slog.Logger) (*App, func(), error) {
	wire.Build(
		storeSet, acquirerSet, appSet,
		provideRedis, provideCache, provideLinks, provideQR, provideHandler,
		wire.Struct(new(App), "*"),
	)
	return nil, nil, nil
}
