// Package app holds Quita's use cases: one service per capability,
// orchestrating the domain and the ports, and the background workers that
// finish what requests start (expiry, automatic returns, refunds, releases),
// scheduled by one WorkerRunner.
package app
