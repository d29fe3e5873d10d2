// Command webhookreceiver is the smallest merchant webhook handler: it
// verifies each request's signature with the Go SDK, answers 2xx and
// prints what arrived. Run it behind `quitad listen` to see webhooks on a
// laptop (README, "See webhooks locally"):
//
//	go run ./examples/webhookreceiver -secret $SECRET
package main

import (
	"flag"
	"fmt"
	"log"
	"net/http"
	"os"

	"github.com/quitapix/quita/client"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:3000", "listen address")
	path := flag.String("path", "/hooks", "the webhook path")
	secret := flag.String("secret", os.Getenv("QUITA_WEBHOOK_SECRET"), "the signing secret (env QUITA_WEBHOOK_SECRET)")
	flag.Parse()
	if *secret == "" {
		log.Fatal("webhookreceiver: -secret (or QUITA_WEBHOOK_SECRET) is required")
	}
	http.HandleFunc(*path, func(w http.ResponseWriter, r *http.Request) {
		ev, err := client.ParseWebhook(r, *secret)
		if err != nil {
			fmt.Printf("refused a request: %v\n", err)
			http.Error(w, "bad signature", http.StatusBadRequest)
			return
		}
		id := ev.ID
		if ev.IsLegacy() {
			id = "delivery " + ev.DeliveryID // legacy envelopes have no id
		}
		fmt.Printf("verified %-24s %s\n", ev.Type, id)
		w.WriteHeader(http.StatusNoContent)
	})
	fmt.Printf("webhookreceiver: verifying webhooks at http://%s%s\n", *addr, *path)
	log.Fatal(http.ListenAndServe(*addr, nil))
}
