package domain

// MaxNameLen bounds a person's or business's name that Quita keeps from
// outside — a payer's name a bank reported, an account's name — in
// characters: 140, the API Pix limit for a name. Receipts print such names,
// so the bound keeps what drawing one costs independent of what was sent.
const MaxNameLen = 140
