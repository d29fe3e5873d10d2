package app

// ApplyPayoutResult writes a PSP's answer about a payout as the worker and
// the notification handler do, for tests of answers neither can be led to
// give on demand (a live payout's notification).
var ApplyPayoutResult = (*PayoutService).apply
