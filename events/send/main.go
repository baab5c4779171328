// Command send signs a sample provider webhook for one of the config's
// sources, exactly as that provider would, and POSTs it to Hookfan:
//
//	go run ./events/send --source stripe
//	go run ./events/send --source github --sample pull_request.opened --count 5
//	go run ./events/send --source stripe --id evt_same --repeat 2   # a provider retry: delivered once
//
// The signing secret comes from the secrets file by the source's secret name.
package main

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "send:", err)
		os.Exit(1)
	}
}

func run() error {
	base := flag.String("url", "http://127.0.0.1:8080", "Hookfan's base URL (the local stack's --listen address)")
	cfgPath := flag.String("config", "infra/local/dev.json", "the Hookfan config naming the source")
	secretsPath := flag.String("secrets", "infra/local/dev-secrets.json", "JSON file of secret name → value")
	sourceName := flag.String("source", "", "the source to send as (required)")
	sampleName := flag.String("sample", "", "sample name under events/testdata/<kind>/ (default: the kind's first)")
	id := flag.String("id", "", "the provider's event id (default: a new one per event)")
	count := flag.Int("count", 1, "number of distinct events")
	repeat := flag.Int("repeat", 1, "times each event is sent (a provider retrying)")
	flag.Parse()
	if *sourceName == "" {
		return errors.New("--source is required")
	}
	cfg, err := config.LoadFile(*cfgPath)
	if err != nil {
		return err
	}
	src, ok := cfg.Source(*sourceName)
	if !ok {
		return fmt.Errorf("source %q is not in %s", *sourceName, *cfgPath)
	}
	secrets, err := devstate.LoadSecrets(*secretsPath)
	if err != nil {
		return err
	}
	values, ok := secrets[src.Verify.SecretName]
	if !ok {
		return fmt.Errorf("%s has no secret %q for source %s", *secretsPath, src.Verify.SecretName, src.Name)
	}
	sample, err := pickSample(src.Verify.Kind, *sampleName)
	if err != nil {
		return err
	}
	client := &http.Client{Timeout: 30 * time.Second}
	url := strings.TrimSuffix(*base, "/") + "/webhooks/" + src.Name
	for range *count {
		eventID := *id
		if eventID == "" {
			eventID = newID()
		}
		s, err := events.WithEventID(sample, eventID, src.Event)
		if err != nil {
			return err
		}
		for range *repeat {
			h, err := events.Sign(src.Verify, s, time.Now(), values[len(values)-1])
			if err != nil {
				return err
			}
			req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(s.Body))
			if err != nil {
				return err
			}
			req.Header = h
			resp, err := client.Do(req)
			if err != nil {
				return err
			}
			body, _ := io.ReadAll(io.LimitReader(resp.Body, 4096))
			resp.Body.Close()
			fmt.Printf("%s %s/%s event %s → %d %s\n", src.Name, s.Kind, s.Name, eventID, resp.StatusCode, strings.TrimSpace(string(body)))
		}
	}
	return nil
}

func pickSample(kind, name string) (events.Sample, error) {
	if name != "" {
		return events.Load(kind, name)
	}
	all, err := events.Samples()
	if err != nil {
		return events.Sample{}, err
	}
	for _, s := range all {
		if s.Kind == kind && s.Name != "url_verification" {
			return s, nil
		}
	}
	return events.Sample{}, fmt.Errorf("no sample for kind %q", kind)
}

// newID returns a fresh provider event id, shaped as a UUID: every kind
// accepts one.
func newID() string {
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
