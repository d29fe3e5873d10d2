// Package brcode builds and reads Pix BR Codes, the "copia e cola" payloads
// (EMV Merchant-Presented Mode with the Banco Central's Pix profile) that a
// payer's banking app scans from a QR code or pastes as text.
//
// NewDynamic builds the single-use code of a charge a PSP serves at a URL,
// NewStatic a reusable code that pays a Pix key directly, and Parse decodes
// and checks a code read from elsewhere. Every code this package returns
// carries a correct CRC and only values payer apps accept; Parse refuses what
// Encode would have to alter, so decoding and re-encoding never change a
// code's meaning.
//
// The package imports only the standard library and keeps no state, so
// another Go service can import it on its own.
package brcode
