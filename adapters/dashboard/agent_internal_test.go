package dashboard

import "testing"

// A session's User-Agent is shortened to the browser and the system.
func TestAgentName(t *testing.T) {
	t.Parallel()
	for ua, want := range map[string]string{
		"Mozilla/5.0 (X11; Linux x86_64; rv:140.0) Gecko/20100101 Firefox/140.0":                                                    "Firefox · Linux",
		"Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36 Edg/131.0": "Edge · Windows",
		"Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.5 Safari/605.1.15":        "Safari · macOS",
		"Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0 Mobile Safari/537.36":         "Chrome · Android",
		"Mozilla/5.0 (iPhone; CPU iPhone OS 18_0 like Mac OS X) AppleWebKit/605.1.15 Version/18.0 Mobile/15E148 Safari/604.1":       "Safari · iOS",
		"curl/8.5.0":               "curl",
		"quita-go/0.1 (go1.26)":    "Quita Go SDK",
		"Go-http-client/1.1":       "Go",
		"":                         "Desconhecido",
		"MeuSistemaDeGestao/2.0 ç": "MeuSistemaDeGestao/2.0 ç",
		"UmAgenteMuitoLongoQueNaoCabeNaColunaDaTabelaDeSessoes/1.0": "UmAgenteMuitoLongoQueNaoCabeNaColunaDaTa…",
	} {
		if got := agentName(ua, langPT); got != want {
			t.Errorf("%q → %q, want %q", ua, got, want)
		}
	}
}
