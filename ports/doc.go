// Package ports declares the small interfaces the application needs from
// the outside world, named by role. Each method's comment lists the errors
// it returns and the locking it promises; adapters prove they fit with
// compile-time assertions, and mocks/ holds moq fakes of every port.
package ports

//go:generate go tool moq -rm -out ../mocks/ports.go -pkg mocks . Clock IDGenerator ChargeStore IdempotencyStore IdempotencyCache CobIntents Acquirer PaymentSimulator AccountStore KeyStore EventOutbox PasswordHasher
