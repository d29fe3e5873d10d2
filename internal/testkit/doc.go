// Package testkit holds the helpers every test package shares: a clock
// tests move by hand and one way to call an HTTP server and read the whole
// answer. It has no dependency on the rest of Quita, so any package's tests
// (adapters, e2e, quitatest) may import it.
package testkit
