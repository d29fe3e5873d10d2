package store

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
)

// Webhook signing secrets (endpoint secrets and the per-mode transaction
// secrets) are sealed at rest with AES-256-GCM under QUITA_MASTER_KEY when
// one is configured, as the PSP credentials are (security.md, item 15). A sealed value is text, so the columns stay as they are:
//
//	sealed:v1:<base64 of nonce || ciphertext>
//
// with the owner (endpoint id, or account id and mode) as additional data,
// so a sealed secret cannot be moved to another row. A value without the
// prefix is a secret written before sealing (or without a key) and is read
// as it is; the next rotation seals it.
const sealedPrefix = "sealed:v1:"

// errSecretNeedsKey: a sealed secret read by a process without the key.
var errSecretNeedsKey = errors.New("store: a webhook secret is sealed but QUITA_MASTER_KEY is not set")

// SealSecretsWith makes the store seal webhook secrets with a 32-byte key
// from now on. Call it once, before serving.
func (db *DB) SealSecretsWith(key []byte) error {
	if len(key) != 32 {
		return errors.New("store: the secrets key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return err
	}
	db.secrets = aead
	return nil
}

func secretAAD(owner string) []byte { return []byte("quita/webhook-secret/v1/" + owner) }

// sealSecret seals s for owner, or returns it as it is without a key.
func (db *DB) sealSecret(owner, s string) (string, error) {
	if db.secrets == nil || s == "" {
		return s, nil
	}
	nonce := make([]byte, db.secrets.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return "", err
	}
	sealed := db.secrets.Seal(nonce, nonce, []byte(s), secretAAD(owner))
	return sealedPrefix + base64.RawStdEncoding.EncodeToString(sealed), nil
}

// openSecret reverses sealSecret; an unsealed value comes back as it is.
func (db *DB) openSecret(owner, s string) (string, error) {
	b64, ok := strings.CutPrefix(s, sealedPrefix)
	if !ok {
		return s, nil
	}
	if db.secrets == nil {
		return "", errSecretNeedsKey
	}
	raw, err := base64.RawStdEncoding.DecodeString(b64)
	n := db.secrets.NonceSize()
	if err != nil || len(raw) < n {
		return "", fmt.Errorf("store: sealed webhook secret of %s is corrupt", owner)
	}
	plain, err := db.secrets.Open(nil, raw[:n], raw[n:], secretAAD(owner))
	if err != nil {
		return "", fmt.Errorf("store: sealed webhook secret of %s does not open with this key", owner)
	}
	return string(plain), nil
}

// transactionSecretOwner names the owner of an account's per-mode secret.
func transactionSecretOwner(accountID, mode string) string { return accountID + "/" + mode }
