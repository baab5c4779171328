// Command receive is a small webhook subscriber for local demos: it verifies
// each Hookfan delivery with the destination's signing secret(s), using the
// Standard Webhooks project's own Go library, and prints it as one JSON line.
//
//	go run ./events/receive --listen 127.0.0.1:9000 --secret whsec_...
//	go run ./events/receive --secrets infra/local/dev-secrets.json --secret-name hookfan/dev/destinations/all
//
// It answers 204 to a verified delivery and 401 to anything else.
package main

import (
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "receive:", err)
		os.Exit(1)
	}
}

func run() error {
	listen := flag.String("listen", "127.0.0.1:9000", "address to listen on")
	secret := flag.String("secret", "", "destination signing secret (whsec_...)")
	secretsFile := flag.String("secrets", "", "JSON file of secret name → value or list of values")
	secretName := flag.String("secret-name", "", "with --secrets: the destination secret's name")
	flag.Parse()
	values, err := secretValues(*secret, *secretsFile, *secretName)
	if err != nil {
		return err
	}
	var hooks []*standardwebhooks.Webhook
	for _, v := range values {
		wh, err := standardwebhooks.NewWebhook(v)
		if err != nil {
			return fmt.Errorf("secret is not a Standard Webhooks secret (whsec_ + base64): %w", err)
		}
		hooks = append(hooks, wh)
	}
	log := lambdaenv.Logger()
	srv := &http.Server{Addr: *listen, Handler: handler(hooks, log), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "receive: verifying deliveries on http://%s/ with %d secret(s)\n", *listen, len(hooks))
	if err := srv.ListenAndServe(); !errors.Is(err, http.ErrServerClosed) {
		return err
	}
	return nil
}

func secretValues(secret, file, name string) ([]string, error) {
	if secret != "" {
		return []string{secret}, nil
	}
	if file == "" || name == "" {
		return nil, errors.New("give --secret, or --secrets FILE with --secret-name NAME")
	}
	raw, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	var all map[string]json.RawMessage
	if err := json.Unmarshal(raw, &all); err != nil {
		return nil, fmt.Errorf("%s: %w", file, err)
	}
	v, ok := all[name]
	if !ok {
		return nil, fmt.Errorf("%s has no secret named %q", file, name)
	}
	var one string
	if json.Unmarshal(v, &one) == nil {
		return []string{one}, nil
	}
	var many []string
	if err := json.Unmarshal(v, &many); err != nil || len(many) == 0 {
		return nil, fmt.Errorf("%s: %q is neither a string nor a list of strings", file, name)
	}
	return many, nil
}

func handler(hooks []*standardwebhooks.Webhook, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, err := io.ReadAll(io.LimitReader(r.Body, 1<<20))
		if err != nil {
			http.Error(w, "read body", http.StatusBadRequest)
			return
		}
		var verr error
		for _, wh := range hooks {
			if verr = wh.Verify(body, r.Header); verr == nil {
				break
			}
		}
		if verr != nil {
			log.Warn("rejected", "path", r.URL.Path, "webhook_id", r.Header.Get("webhook-id"), "error", verr.Error())
			w.WriteHeader(http.StatusUnauthorized)
			return
		}
		log.Info("delivery", "path", r.URL.Path, "webhook_id", r.Header.Get("webhook-id"),
			"source", r.Header.Get("hookfan-source"), "type", r.Header.Get("hookfan-type"),
			"attempt", r.Header.Get("hookfan-attempt"), "content_type", r.Header.Get("Content-Type"),
			"body", string(body))
		w.WriteHeader(http.StatusNoContent)
	})
}
