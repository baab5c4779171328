package ingest_test

import (
	"bytes"
	"context"
	"crypto/hmac"
	"crypto/sha256"
	"encoding/base64"
	"encoding/json"
	"io"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/service/sns"
	"github.com/stripe/stripe-go/v82/webhook"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/verify"
)

// Performance budget (README, "Measured numbers"): one request through the
// handler — verification, id and type, message, metrics flush and log line
// (the EMF sink and the logger functions/ingest builds, writing to
// io.Discard) —
// costs at most 3× a bare HMAC-SHA256 over the same body; our Stripe
// verification is at least as fast as stripe-go's with fewer allocations.
// Run them side by side:
//
//	go test -run '^$' -bench 'Handler|BareHMAC|StripeVerify' -benchmem -count 3 ./shared/ingest

var benchSizes = []struct {
	name string
	size int
}{{"1KiB", 1 << 10}, {"4KiB", 4 << 10}, {"8KiB", 8 << 10}, {"16KiB", 16 << 10}}

// stripeBody returns the Stripe sample, compacted, padded to exactly size
// bytes with a metadata note: still valid JSON of the same event.
func stripeBody(b *testing.B, size int) []byte {
	b.Helper()
	var compact bytes.Buffer
	if err := json.Compact(&compact, events.MustLoad("stripe", "payment_intent.succeeded").Body); err != nil {
		b.Fatal(err)
	}
	base := compact.String()
	const marker = `"order_id":"1042"`
	pad := size - len(base) - len(`,"note":""`)
	if pad < 0 {
		b.Fatalf("sample larger than %d bytes", size)
	}
	body := strings.Replace(base, marker, marker+`,"note":"`+strings.Repeat("x", pad)+`"`, 1)
	if len(body) != size {
		b.Fatalf("padded body is %d bytes, want %d", len(body), size)
	}
	return []byte(body)
}

type discardPublisher struct{}

// discardOutput is every answer of discardPublisher: a fake that costs
// nothing, so the benchmarks measure the handler.
var discardOutput = &sns.PublishOutput{}

func (discardPublisher) Publish(context.Context, *sns.PublishInput, ...func(*sns.Options)) (*sns.PublishOutput, error) {
	return discardOutput, nil
}

// runHandler benchmarks one request per iteration: a signed Stripe event
// of each size, base64-encoded when asBase64, through a handler with a fake
// publisher and secrets from memory, recording to rec and logging to log.
func runHandler(b *testing.B, rec ingest.Recorder, log *slog.Logger, asBase64 bool) {
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			now := time.Now()
			sec := &fakeSecrets{values: map[string][]string{"hookfan/sources/stripe": {secretOf("stripe")}}}
			h, err := ingest.New(ingest.Options{
				Sources: []config.Source{sourceConfig(b, "stripe")}, TopicARN: topicARN, Publisher: discardPublisher{},
				Secrets: sec, Metrics: rec, Logger: log, Now: func() time.Time { return now },
			})
			if err != nil {
				b.Fatal(err)
			}
			s := events.MustLoad("stripe", "payment_intent.succeeded")
			s.Body = stripeBody(b, sz.size)
			req := signSample(b, "stripe", s, now)
			if asBase64 {
				req.Body, req.IsBase64Encoded = base64.StdEncoding.EncodeToString(s.Body), true
			}
			ctx := context.Background()
			if resp, _ := h.Handle(ctx, req); resp.StatusCode != 202 {
				b.Fatalf("status %d %s", resp.StatusCode, resp.Body)
			}
			b.SetBytes(int64(sz.size))
			b.ReportAllocs()
			for b.Loop() {
				if resp, _ := h.Handle(ctx, req); resp.StatusCode != 202 {
					b.Fatal(resp.Body)
				}
			}
		})
	}
}

// BenchmarkHandler: the EMF sink and NewLogHandler, both to io.Discard, as
// the function runs.
func BenchmarkHandler(b *testing.B) {
	runHandler(b, metrics.NewRecorder(metrics.NewEMF(io.Discard)), slog.New(ingest.NewLogHandler(io.Discard, nil)), false)
}

// BenchmarkHandlerBase64 is BenchmarkHandler with the body base64-encoded,
// as API Gateway passes every body when binary media types are "*/*".
func BenchmarkHandlerBase64(b *testing.B) {
	runHandler(b, metrics.NewRecorder(metrics.NewEMF(io.Discard)), slog.New(ingest.NewLogHandler(io.Discard, nil)), true)
}

func BenchmarkBareHMAC(b *testing.B) {
	key := []byte(secretOf("stripe"))
	for _, sz := range benchSizes {
		b.Run(sz.name, func(b *testing.B) {
			body := stripeBody(b, sz.size)
			b.SetBytes(int64(sz.size))
			b.ReportAllocs()
			for b.Loop() {
				m := hmac.New(sha256.New, key)
				m.Write(body)
				m.Sum(nil)
			}
		})
	}
}

// oneHeader is a Header with a single field, so the comparison measures
// verification rather than header lookup.
type oneHeader struct{ name, value string }

func (h oneHeader) Values(name string) []string {
	if strings.EqualFold(name, h.name) {
		return []string{h.value}
	}
	return nil
}

func BenchmarkStripeVerify(b *testing.B) {
	const secret = "whsec_benchmark_secret_0123456789"
	payload := events.MustLoad("stripe", "payment_intent.succeeded").Body
	now := time.Now()
	sigHeader := events.StripeHeader(payload, now, secret)
	b.Run("hookfan", func(b *testing.B) {
		v := &verify.Stripe{Tolerance: webhook.DefaultTolerance}
		key, _ := v.Key(secret)
		keys := []verify.Key{key}
		r := &verify.Request{Header: oneHeader{"Stripe-Signature", sigHeader}, Body: payload, Now: now}
		b.ReportAllocs()
		for b.Loop() {
			if err := v.Verify(r, keys); err != nil {
				b.Fatal(err)
			}
		}
	})
	b.Run("stripe-go", func(b *testing.B) {
		b.ReportAllocs()
		for b.Loop() {
			if err := webhook.ValidatePayload(payload, sigHeader, secret); err != nil {
				b.Fatal(err)
			}
		}
	})
}

// nopRecorder drops metrics, to separate the handler's own work from the
// sinks' in BenchmarkHandlerCore.
type nopRecorder struct{}

func (nopRecorder) CountAt(time.Time, string, ...metrics.Dimension) {}
func (nopRecorder) Flush(context.Context) error                     { return nil }

// BenchmarkHandlerCore is BenchmarkHandler without the log line and the
// metrics flush: verification, id and type, message and answer only.
func BenchmarkHandlerCore(b *testing.B) {
	runHandler(b, nopRecorder{}, slog.New(slog.DiscardHandler), false)
}
