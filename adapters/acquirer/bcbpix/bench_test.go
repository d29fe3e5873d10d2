package bcbpix_test

import (
	"bytes"
	"context"
	"crypto/tls"
	"encoding/json"
	"fmt"
	"net/http"
	"net/url"
	"slices"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quitapix/quita/domain"
	"github.com/quitapix/quita/ports"
)

// BenchmarkCreatePixCharge compares creating a cob through the adapter with
// the PSP's own time: the same PUT /cob/{txid} over the same mTLS loopback
// connection with a token fetched once ("psp"). Each reports p50 and p99;
// the adapter's overhead is the difference (target ≤ 5 ms at p99).
//
//	go test -run '^$' -bench CreatePixCharge ./adapters/acquirer/bcbpix/
func BenchmarkCreatePixCharge(b *testing.B) {
	pki := newPKI(b)
	_, psp := startPSP(b, pki)
	ctx := context.Background()

	b.Run("psp", func(b *testing.B) {
		cert, err := tls.X509KeyPair([]byte(pki.ClientCertPEM), []byte(pki.ClientKeyPEM))
		if err != nil {
			b.Fatal(err)
		}
		hc := &http.Client{Transport: &http.Transport{TLSClientConfig: &tls.Config{MinVersion: tls.VersionTLS12,
			Certificates: []tls.Certificate{cert}, RootCAs: pki.Pool}, MaxIdleConnsPerHost: 64}}
		form := url.Values{"grant_type": {"client_credentials"}}
		req, _ := http.NewRequest(http.MethodPost, psp.URL+"/oauth/token", strings.NewReader(form.Encode()))
		req.SetBasicAuth(testClientID, testClientSecret)
		req.Header.Set("Content-Type", "application/x-www-form-urlencoded")
		resp, err := hc.Do(req)
		if err != nil {
			b.Fatal(err)
		}
		var tok struct {
			AccessToken string `json:"access_token"`
		}
		_ = json.NewDecoder(resp.Body).Decode(&tok)
		resp.Body.Close()
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			body, _ := json.Marshal(map[string]any{"calendario": map[string]int{"expiracao": 3600},
				"valor": map[string]string{"original": "123.45"}, "chave": testPixKey, "solicitacaoPagador": "pedido"})
			req, _ := http.NewRequest(http.MethodPut, psp.URL+"/cob/"+domain.DeriveTxID("psp", fmt.Sprint(benchSeq.Add(1))), bytes.NewReader(body))
			req.Header.Set("Authorization", "Bearer "+tok.AccessToken)
			req.Header.Set("Content-Type", "application/json")
			t0 := time.Now()
			resp, err := hc.Do(req)
			if err != nil {
				b.Fatal(err)
			}
			var out map[string]any
			_ = json.NewDecoder(resp.Body).Decode(&out)
			resp.Body.Close()
			lat = append(lat, time.Since(t0))
			if resp.StatusCode != http.StatusCreated {
				b.Fatalf("status %d", resp.StatusCode)
			}
		}
		report(b, lat)
	})

	b.Run("adapter", func(b *testing.B) {
		a, _ := newAdapter(b, pki, psp.URL, "bench")
		// Warm: load the configuration, fetch the token, open the connection.
		if _, err := a.CreatePixCharge(ctx, benchReq(fmt.Sprint("warm", benchSeq.Add(1)))); err != nil {
			b.Fatal(err)
		}
		lat := make([]time.Duration, 0, b.N)
		b.ResetTimer()
		for range b.N {
			req := benchReq(fmt.Sprint(benchSeq.Add(1)))
			t0 := time.Now()
			if _, err := a.CreatePixCharge(ctx, req); err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
		}
		report(b, lat)
	})
}

var benchSeq atomic.Int64

func benchReq(n string) ports.CreatePixChargeRequest {
	return ports.CreatePixChargeRequest{Scope: ports.Scope{AccountID: "bench", Mode: domain.ModeLive}, ChargeID: n,
		TxID: domain.DeriveTxID("adapter", n), Amount: 12345, ExpiresAt: time.Now().Add(time.Hour), Description: "pedido"}
}

func report(b *testing.B, lat []time.Duration) {
	b.StopTimer()
	if len(lat) == 0 {
		return
	}
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50-ms")
	b.ReportMetric(pct(0.99), "p99-ms")
}
