// Command receive is a small webhook subscriber for local demos: it verifies
// each Hookfan delivery with the destination's signing secret(s), using the
// Standard Webhooks project's own Go library, and prints it as one JSON line.
//
//	go run ./events/receive --listen 127.0.0.1:9000 --secret whsec_...
//	go run ./events/receive --secrets infra/local/dev-secrets.json --secret-name hookfan/dev/destinations/all
//
// It answers 204 to a verified delivery and 401 to anything else, unless
// told to misbehave, to rehearse a subscriber's failures (docs/local.md):
//
//	--answer 500                 every verified delivery answered 500 (an outage)
//	--answer 410                 410 Gone: Hookfan stops delivering the event
//	--answer 429 --retry-after 30  with a Retry-After header, in seconds
//	--fail-first 3               each event's first 3 attempts at each path answered --answer
//	                             (500 unless given), later ones 204
//	--delay 2s                   wait before answering (a slow subscriber)
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
	"strconv"
	"sync"
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
	var b behaviour
	flag.IntVar(&b.Answer, "answer", 0, "the status to answer verified deliveries with (default 204; with --fail-first, 500)")
	flag.IntVar(&b.RetryAfter, "retry-after", 0, "seconds to send in a Retry-After header with a non-2xx answer")
	flag.DurationVar(&b.Delay, "delay", 0, "how long to wait before answering")
	flag.IntVar(&b.FailFirst, "fail-first", 0, "answer only each event's first N attempts with --answer, then 204")
	flag.Parse()
	if err := b.check(); err != nil {
		return err
	}
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
	srv := &http.Server{Addr: *listen, Handler: handler(hooks, log, &answerer{behaviour: b}), ReadHeaderTimeout: 5 * time.Second}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()
	fmt.Fprintf(os.Stderr, "receive: verifying deliveries on http://%s/ with %d secret(s); %s\n", *listen, len(hooks), b)
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

// behaviour is how the receiver answers verified deliveries.
type behaviour struct {
	Answer     int
	RetryAfter int
	Delay      time.Duration
	FailFirst  int
}

// answerer answers as its behaviour says, counting each event's attempts
// for FailFirst.
type answerer struct {
	behaviour
	mu       sync.Mutex
	attempts map[string]int // by path and webhook-id (each destination has its path)
}

func (b behaviour) check() error {
	var errs []error
	if b.Answer != 0 && (b.Answer < 200 || b.Answer > 599) {
		errs = append(errs, fmt.Errorf("--answer %d: give an HTTP status, 200 to 599", b.Answer))
	}
	if b.RetryAfter < 0 {
		errs = append(errs, fmt.Errorf("--retry-after %d: give seconds, 0 or more", b.RetryAfter))
	}
	if b.Delay < 0 {
		errs = append(errs, fmt.Errorf("--delay %s: give 0 or more", b.Delay))
	}
	if b.FailFirst < 0 {
		errs = append(errs, fmt.Errorf("--fail-first %d: give 0 or more", b.FailFirst))
	}
	if b.FailFirst > 0 && b.Answer >= 200 && b.Answer < 300 {
		errs = append(errs, fmt.Errorf("--fail-first %d with --answer %d: the first attempts must fail; give a non-2xx --answer", b.FailFirst, b.Answer))
	}
	return errors.Join(errs...)
}

// String says how the receiver answers, for its start line.
func (b behaviour) String() string {
	s := "answering 204"
	switch {
	case b.FailFirst > 0:
		s = fmt.Sprintf("answering each event's first %d attempt(s) %d, then 204", b.FailFirst, b.failure())
	case b.Answer != 0:
		s = fmt.Sprintf("answering %d", b.Answer)
	}
	if b.RetryAfter > 0 {
		s += fmt.Sprintf(", Retry-After %d on failures", b.RetryAfter)
	}
	if b.Delay > 0 {
		s += fmt.Sprintf(", after %s", b.Delay)
	}
	return s
}

func (b behaviour) failure() int {
	if b.Answer == 0 {
		return http.StatusInternalServerError
	}
	return b.Answer
}

// status is the answer to a verified delivery of event id at path: with
// FailFirst, each destination's (path's) first attempts of each event fail.
func (b *answerer) status(path, id string) int {
	if b.FailFirst == 0 {
		if b.Answer == 0 {
			return http.StatusNoContent
		}
		return b.Answer
	}
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.attempts == nil {
		b.attempts = map[string]int{}
	}
	key := path + " " + id
	b.attempts[key]++
	if b.attempts[key] <= b.FailFirst {
		return b.failure()
	}
	return http.StatusNoContent
}

func handler(hooks []*standardwebhooks.Webhook, log *slog.Logger, b *answerer) http.Handler {
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
		status := b.status(r.URL.Path, r.Header.Get("webhook-id"))
		if b.Delay > 0 {
			select {
			case <-time.After(b.Delay):
			case <-r.Context().Done():
				return
			}
		}
		if b.RetryAfter > 0 && (status < 200 || status > 299) {
			w.Header().Set("Retry-After", strconv.Itoa(b.RetryAfter))
		}
		log.Info("delivery", "path", r.URL.Path, "webhook_id", r.Header.Get("webhook-id"),
			"source", r.Header.Get("hookfan-source"), "type", r.Header.Get("hookfan-type"),
			"attempt", r.Header.Get("hookfan-attempt"), "accepted_at", r.Header.Get("hookfan-accepted-at"), "content_type", r.Header.Get("Content-Type"),
			"answer", status, "body", string(body))
		w.WriteHeader(status)
	})
}
