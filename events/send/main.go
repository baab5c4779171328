// Command send signs a sample provider webhook for one of the config's
// sources, exactly as that provider would, and POSTs it to Hookfan:
//
//	go run ./events/send --source stripe
//	go run ./events/send --source github --sample pull_request.opened --count 5
//	go run ./events/send --source stripe --id evt_same --repeat 2   # a provider retry: delivered once
//	go run ./events/send --source stripe --body captured.json       # your own payload, signed as Stripe
//	go run ./events/send --source github --body push.json --type push
//
// With --body the body is sent byte for byte: its own id and type stand
// where the provider keeps them in the body (Stripe, Slack, Standard
// Webhooks); where the provider keeps them in headers (GitHub, Shopify, a
// source's idHeader or typeHeader), the id is --id or a new one and the
// type is --type. The other headers are the kind's sample's.
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
	mathrand "math/rand/v2"
	"net/http"
	"os"
	"strings"
	"time"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

func main() {
	if err := run(os.Args[1:], os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "send:", err)
		os.Exit(1)
	}
}

func run(args []string, stdout io.Writer) error {
	flag := flag.NewFlagSet("send", flag.ContinueOnError)
	base := flag.String("url", "http://127.0.0.1:8080", "Hookfan's base URL (the local stack's --listen address)")
	cfgPath := flag.String("config", "infra/local/dev.json", "the Hookfan config naming the source")
	secretsPath := flag.String("secrets", "infra/local/dev-secrets.json", "JSON file of secret name → value")
	sourceName := flag.String("source", "", "the source to send as (required)")
	sampleName := flag.String("sample", "", "sample name under events/testdata/<kind>/ (default: the kind's first)")
	id := flag.String("id", "", "the provider's event id (default: a new one per event)")
	count := flag.Int("count", 1, "number of distinct events")
	repeat := flag.Int("repeat", 1, "times each event is sent (a provider retrying)")
	bodyPath := flag.String("body", "", "send this file's bytes as the body (a captured payload) instead of a sample")
	typ := flag.String("type", "", "with --body: the event type, where the source's provider sends it in a header")
	if err := flag.Parse(args); err != nil {
		return err
	}
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
	var own []byte
	if *bodyPath != "" {
		if own, err = os.ReadFile(*bodyPath); err != nil {
			return err
		}
	}
	if *typ != "" && own == nil {
		return errors.New("--type goes with --body; a sample's type is its name (--sample)")
	}
	sample, err := pickSample(src.Verify.Kind, *sampleName)
	if err != nil {
		return err
	}
	if own != nil {
		if sample, err = ownSample(sample, src, own, *typ); err != nil {
			return err
		}
	}
	client := &http.Client{Timeout: 30 * time.Second}
	url := strings.TrimSuffix(*base, "/") + "/webhooks/" + src.Name
	for range *count {
		eventID := *id
		if eventID == "" {
			eventID = newID(src.Verify.Kind)
		}
		s, shown, err := withID(sample, eventID, src, own != nil)
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
			fmt.Fprintf(stdout, "%s %s/%s event %s → %d %s\n", src.Name, s.Kind, s.Name, shown, resp.StatusCode, strings.TrimSpace(string(body)))
		}
	}
	return nil
}

// ownSample is a captured body sent as src: the body byte for byte, the
// sample's other headers, and typ where src's kind carries the type in a
// header. A kind reading the type from the body takes the body's own;
// --type is refused there rather than silently ignored.
func ownSample(sample events.Sample, src config.Source, body []byte, typ string) (events.Sample, error) {
	s := sample.Clone()
	s.Name, s.Body = "(--body)", body
	header := typeHeader(src)
	switch {
	case header == "" && typ != "":
		return s, fmt.Errorf("--type %q: %s reads the type from the body; send a body with the type in it", typ, src.Verify.Kind)
	case header != "" && typ == "":
		return s, fmt.Errorf("--body as %s needs --type: the provider sends the type in %s", src.Name, header)
	case header == "X-GitHub-Event":
		typ, _, _ = strings.Cut(typ, ".") // GitHub's type is the event, plus the body's action
	}
	if header != "" {
		s.Header.Set(header, typ)
	}
	return s, nil
}

// typeHeader is the header src's kind reads the event type from, or ""
// when it reads the body.
func typeHeader(src config.Source) string {
	if k, ok := provider.Lookup(src.Verify.Kind); ok && !k.Places {
		return k.TypeHeader
	}
	return src.Event.TypeHeader
}

// withID gives a sample the provider event id id, and says which id it
// carries. A captured body keeps its bytes: only a header id is set, and
// a body id stays the body's.
func withID(s events.Sample, id string, src config.Source, own bool) (events.Sample, string, error) {
	if !own {
		s, err := events.WithEventID(s, id, src.Event)
		return s, id, err
	}
	k, ok := provider.Lookup(s.Kind)
	if !ok {
		return s, "", fmt.Errorf("unknown kind %q", s.Kind)
	}
	if place := k.EventID(provider.Params{Event: src.Event.Places()}); place.Header != "" {
		s = s.Clone()
		s.Header.Set(place.Header, id)
		return s, id, nil
	}
	return s, "(the body's id)", nil
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

// newID returns a fresh provider event id shaped as the kind's provider
// makes them: Stripe's evt_ and 24 letters and digits, Slack's Ev and 10
// capitals and digits, a Standard Webhooks msg_ id, and a UUID for the
// others (GitHub's X-GitHub-Delivery, Shopify's X-Shopify-Webhook-Id),
// which every generic kind accepts too.
func newID(kind string) string {
	switch kind {
	case "stripe":
		return "evt_" + randomOf(alnum, 24)
	case "slack":
		return "Ev" + randomOf(upperAlnum, 10)
	case "standard-webhooks":
		return "msg_" + randomOf(alnum, 27)
	}
	b := make([]byte, 16)
	_, _ = rand.Read(b)
	b[6], b[8] = b[6]&0x0f|0x40, b[8]&0x3f|0x80 // version 4, RFC 4122 variant
	h := hex.EncodeToString(b)
	return h[:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}

const (
	alnum      = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
	upperAlnum = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZ"
)

func randomOf(alphabet string, n int) string {
	out := make([]byte, n)
	for i := range out {
		out[i] = alphabet[mathrand.IntN(len(alphabet))]
	}
	return string(out)
}
