package bcbpix

import (
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"strings"
)

// AccountConfig is one merchant account's PSP: where its API Pix lives, its
// OAuth2 client and its mTLS certificate. It is stored sealed (AES-GCM) and
// never logged: String and LogValue hide every secret.
type AccountConfig struct {
	// BaseURL is the API Pix base ("https://pix.example-bank.com.br/api/v2").
	BaseURL string `json:"base_url"`
	// TokenURL defaults to BaseURL + "/oauth/token".
	TokenURL     string `json:"token_url,omitempty"`
	ClientID     string `json:"client_id"`
	ClientSecret string `json:"client_secret"`
	// CertPEM and KeyPEM are the client certificate the PSP issued (mTLS);
	// both empty when the PSP does not require one.
	CertPEM string `json:"cert_pem,omitempty"`
	KeyPEM  string `json:"key_pem,omitempty"`
	// CAPEM, when set, is the only CA trusted for the PSP's server
	// certificate (otherwise the system roots).
	CAPEM string `json:"ca_pem,omitempty"`
	// PixKey is the receiver's Pix key (chave) the cobs are created for.
	PixKey string `json:"pix_key"`
	// PixSend names the PSP's Pix-send API, for payouts and cashout
	// refunds: "efi" (PixSendEfi), or "" when the PSP sends no Pix.
	PixSend string `json:"pix_send,omitempty"`
	// CallbackToken is the secret last segment of the webhook URL
	// registered at the PSP (NewCallbackToken); Configure fills it.
	CallbackToken string `json:"callback_token,omitempty"`
	// Receiver is the receiver's account at the PSP that Pix Automático
	// debits credit (cobr.recebedor), nil when the account collects none.
	Receiver *ReceiverAccount `json:"receiver_account,omitempty"`
}

// ReceiverAccount is the receiver's account at its PSP.
type ReceiverAccount struct {
	// Branch (agencia) has up to 4 digits, "" when the PSP has none.
	Branch string `json:"branch,omitempty"`
	// Number (conta) has up to 20 characters.
	Number string `json:"number"`
	// Type is the API Pix's tipoConta: CORRENTE, POUPANCA or PAGAMENTO.
	Type string `json:"type"`
}

func (r *ReceiverAccount) validate() error {
	switch {
	case r.Number == "" || len(r.Number) > 20:
		return errors.New("receiver account number must have 1 to 20 characters")
	case len(r.Branch) > 4:
		return errors.New("receiver account branch must have up to 4 characters")
	case r.Type != "CORRENTE" && r.Type != "POUPANCA" && r.Type != "PAGAMENTO":
		return errors.New("receiver account type must be CORRENTE, POUPANCA or PAGAMENTO")
	}
	return nil
}

// callbackTokenBytes is the entropy of a callback token: 256 bits.
const callbackTokenBytes = 32

// NewCallbackToken returns a random, URL-safe callback token.
func NewCallbackToken() string {
	b := make([]byte, callbackTokenBytes)
	_, _ = rand.Read(b)
	return base64.RawURLEncoding.EncodeToString(b)
}

// String never shows secrets.
func (c AccountConfig) String() string {
	return fmt.Sprintf("bcbpix.AccountConfig{BaseURL:%s ClientID:%s}", c.BaseURL, c.ClientID)
}

// Validate checks the configuration and that the certificate and key load.
func (c AccountConfig) Validate() error {
	u, err := url.Parse(c.BaseURL)
	if err != nil || (u.Scheme != "https" && u.Scheme != "http") || u.Host == "" {
		return errors.New("base URL must be an absolute http(s) URL")
	}
	if c.TokenURL != "" {
		if t, err := url.Parse(c.TokenURL); err != nil || t.Host == "" {
			return errors.New("token URL must be an absolute URL")
		}
	}
	if c.ClientID == "" || c.ClientSecret == "" {
		return errors.New("client id and client secret are required")
	}
	if c.PixKey == "" {
		return errors.New("pix key is required")
	}
	if c.PixSend != "" && c.PixSend != PixSendEfi {
		return errors.New(`pix send must be "efi" or empty`)
	}
	if (c.CertPEM == "") != (c.KeyPEM == "") {
		return errors.New("certificate and key go together")
	}
	if c.CertPEM != "" {
		if _, err := tls.X509KeyPair([]byte(c.CertPEM), []byte(c.KeyPEM)); err != nil {
			return errors.New("certificate and key do not load as a pair")
		}
	}
	if c.CAPEM != "" && !x509.NewCertPool().AppendCertsFromPEM([]byte(c.CAPEM)) {
		return errors.New("CA holds no PEM certificate")
	}
	if c.Receiver != nil {
		if err := c.Receiver.validate(); err != nil {
			return err
		}
	}
	if c.CallbackToken != "" {
		if b, err := base64.RawURLEncoding.DecodeString(c.CallbackToken); err != nil || len(b) < callbackTokenBytes {
			return errors.New("callback token must be 32 random bytes, base64url")
		}
	}
	return nil
}

func (c AccountConfig) tokenURL() string {
	if c.TokenURL != "" {
		return c.TokenURL
	}
	return strings.TrimRight(c.BaseURL, "/") + "/oauth/token"
}

// Sealer encrypts account configurations at rest with AES-256-GCM under the
// master key. The account id and provider are the additional data, so a
// sealed configuration cannot be moved to another account.
type Sealer struct{ aead cipher.AEAD }

// ErrNoMasterKey: QUITA_MASTER_KEY is not configured.
var ErrNoMasterKey = errors.New("bcbpix: QUITA_MASTER_KEY is not set")

// ParseMasterKey reads a 32-byte key written as 64 hex digits or base64.
func ParseMasterKey(s string) ([]byte, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrNoMasterKey
	}
	if b, err := hex.DecodeString(s); err == nil && len(b) == 32 {
		return b, nil
	}
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.RawStdEncoding, base64.URLEncoding, base64.RawURLEncoding} {
		if b, err := enc.DecodeString(s); err == nil && len(b) == 32 {
			return b, nil
		}
	}
	return nil, errors.New("bcbpix: QUITA_MASTER_KEY must be 32 bytes as 64 hex digits or base64")
}

// NewSealer returns a sealer over a 32-byte master key; nil key → a sealer
// that refuses with ErrNoMasterKey.
func NewSealer(key []byte) (*Sealer, error) {
	if key == nil {
		return &Sealer{}, nil
	}
	if len(key) != 32 {
		return nil, errors.New("bcbpix: master key must be 32 bytes")
	}
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		return nil, err
	}
	return &Sealer{aead: aead}, nil
}

const sealVersion = 1

func aad(accountID string) []byte { return []byte("quita/bcbpix/v1/" + accountID) }

// Seal encrypts cfg for accountID: version byte, nonce, ciphertext.
func (s *Sealer) Seal(accountID string, cfg AccountConfig) ([]byte, error) {
	if s.aead == nil {
		return nil, ErrNoMasterKey
	}
	plain, err := json.Marshal(cfg)
	if err != nil {
		return nil, err
	}
	nonce := make([]byte, s.aead.NonceSize())
	if _, err := rand.Read(nonce); err != nil {
		return nil, err
	}
	out := append([]byte{sealVersion}, nonce...)
	return s.aead.Seal(out, nonce, plain, aad(accountID)), nil
}

// Open decrypts what Seal wrote for accountID.
func (s *Sealer) Open(accountID string, sealed []byte) (AccountConfig, error) {
	var cfg AccountConfig
	if s.aead == nil {
		return cfg, ErrNoMasterKey
	}
	n := s.aead.NonceSize()
	if len(sealed) < 1+n || sealed[0] != sealVersion {
		return cfg, errors.New("bcbpix: sealed configuration has an unknown format")
	}
	plain, err := s.aead.Open(nil, sealed[1:1+n], sealed[1+n:], aad(accountID))
	if err != nil {
		return cfg, errors.New("bcbpix: sealed configuration does not open with this master key")
	}
	if err := json.Unmarshal(plain, &cfg); err != nil {
		return cfg, errors.New("bcbpix: sealed configuration is corrupt")
	}
	return cfg, nil
}
