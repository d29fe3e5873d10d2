package store

import (
	"context"
	"time"

	"github.com/uptrace/bun"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

var _ ports.AccountFeeStore = (*DB)(nil)

type accountFeeRow struct {
	bun.BaseModel `bun:"table:account_fees,alias:af"`

	AccountID     string `bun:"account_id,pk"`
	Method        string `bun:"method,pk"`
	ProviderBPS   int64  `bun:"provider_bps"`
	ProviderFixed int64  `bun:"provider_fixed"`
	PlatformBPS   int64  `bun:"platform_bps"`
	PlatformFixed int64  `bun:"platform_fixed"`
	UpdatedAt     dbTime `bun:"updated_at"`
}

// AccountFees returns the account's fee overrides by method.
func (db *DB) AccountFees(ctx context.Context, accountID string) (map[domain.Method]domain.FeeSchedule, error) {
	var rows []accountFeeRow
	if err := db.bun.NewSelect().Model(&rows).Where("af.account_id = ?", accountID).Scan(ctx); err != nil {
		return nil, mapError(err)
	}
	out := make(map[domain.Method]domain.FeeSchedule, len(rows))
	for _, r := range rows {
		out[domain.Method(r.Method)] = domain.FeeSchedule{
			Provider: domain.Fee{BPS: r.ProviderBPS, Fixed: r.ProviderFixed},
			Platform: domain.Fee{BPS: r.PlatformBPS, Fixed: r.PlatformFixed},
		}
	}
	return out, nil
}

// PutAccountFee upserts the account's schedule for one method.
func (db *DB) PutAccountFee(ctx context.Context, accountID string, m domain.Method, f domain.FeeSchedule, at time.Time) error {
	row := &accountFeeRow{AccountID: accountID, Method: string(m), ProviderBPS: f.Provider.BPS, ProviderFixed: f.Provider.Fixed,
		PlatformBPS: f.Platform.BPS, PlatformFixed: f.Platform.Fixed, UpdatedAt: newDBTime(at)}
	_, err := db.bun.NewInsert().Model(row).On("CONFLICT (account_id, method) DO UPDATE").
		Set("provider_bps = EXCLUDED.provider_bps, provider_fixed = EXCLUDED.provider_fixed").
		Set("platform_bps = EXCLUDED.platform_bps, platform_fixed = EXCLUDED.platform_fixed, updated_at = EXCLUDED.updated_at").
		Exec(ctx)
	return mapError(err)
}
