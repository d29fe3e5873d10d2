package domain_test

import (
	"fmt"
	"time"

	"github.com/quitapix/quita/domain"
)

// A merchant's receiver checks X-Quita-Signature on the raw body before it
// parses it. During a secret rotation it passes both secrets.
func ExampleVerifyWebhook() {
	const (
		oldSecret = "4f1c2b6e8a9d0e3f5a7b9c1d2e4f6a8b0c2d4e6f8a0b1c3d5e7f9a1b3c5d7e9f"
		newSecret = "a0b1c2d3e4f5061728394a5b6c7d8e9fa0b1c2d3e4f5061728394a5b6c7d8e9f"
	)
	body := []byte(`{"id":"evt_1","object":"event","type":"charge.paid"}`)
	sentAt := time.Date(2026, 11, 22, 12, 0, 0, 0, time.UTC)
	header := domain.SignCanonical(newSecret, sentAt, body) // what Quita sends

	err := domain.VerifyWebhook(header, body, sentAt.Add(2*time.Second), newSecret, oldSecret)
	fmt.Println("fresh:", err)

	err = domain.VerifyWebhook(header, body, sentAt.Add(10*time.Minute), newSecret, oldSecret)
	fmt.Println("replayed later:", err)

	err = domain.VerifyWebhook(domain.SignLegacy(newSecret, body), []byte(`{"tampered":true}`), sentAt, newSecret)
	fmt.Println("tampered:", err)
	// Output:
	// fresh: <nil>
	// replayed later: webhook signature timestamp is outside the tolerance
	// tampered: webhook signature does not match
}
