package transform_test

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
	"testing/synctest"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/transform"
)

// A documented transform example: a marker naming the sample event it
// runs on, the jq expression, and the JSON it yields.
//
//	<!-- transform-example: stripe/payment_intent.succeeded -->
//	```jq
//	{text: .type}
//	```
//	… yields:
//	```json
//	{"text": "payment_intent.succeeded"}
//	```
var (
	exampleRE = regexp.MustCompile("(?s)<!-- transform-example: ([a-z-]+)/([a-z_.]+) -->\\s*```jq\\n(.*?)```.*?```json\\n(.*?)```")
	jqBlockRE = regexp.MustCompile("(?m)^```jq$")
	// A destination in the docs whose transform is a JSON string.
	configRE = regexp.MustCompile("(?s)<!-- transform-config: ([a-z-]+)/([a-z_.]+) -->\\s*```json\\n(.*?)```")
)

// TestDocumentedExamples runs every transform example of the docs on its
// sample event (events/testdata) and compares what it yields; every jq
// block in the docs is such an example, and every destination marked as a
// transform configuration validates and yields what its example does.
func TestDocumentedExamples(t *testing.T) {
	files, err := filepath.Glob("../../docs/*.md")
	if err != nil || len(files) == 0 {
		t.Fatalf("no docs: %v", err)
	}
	ran := 0
	for _, f := range files {
		raw, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		doc := string(raw)
		examples := exampleRE.FindAllStringSubmatch(doc, -1)
		if blocks := len(jqBlockRE.FindAllString(doc, -1)); blocks != len(examples) {
			t.Errorf("%s: %d jq blocks, %d of them marked examples with an output; mark each <!-- transform-example: kind/name --> and give its output", f, blocks, len(examples))
		}
		for _, m := range examples {
			kind, name, expr, want := m[1], m[2], m[3], m[4]
			t.Run(filepath.Base(f)+"/"+kind+"/"+name, func(t *testing.T) {
				checkExample(t, kind, name, expr, want)
			})
			ran++
		}
		for _, m := range configRE.FindAllStringSubmatch(doc, -1) {
			kind, name, dest := m[1], m[2], m[3]
			t.Run(filepath.Base(f)+"/config/"+kind+"/"+name, func(t *testing.T) {
				d, err := config.DecodeDestination("the documented destination", dest)
				if err != nil {
					t.Fatalf("the documented destination does not validate: %v", err)
				}
				if d.Transform == "" {
					t.Fatal("the documented destination has no transform")
				}
				for _, e := range examples {
					if e[1] == kind && e[2] == name {
						checkExample(t, kind, name, d.Transform, e[4])
						return
					}
				}
				t.Errorf("no example output for %s/%s", kind, name)
			})
			ran++
		}
	}
	if ran < 3 {
		t.Errorf("%d documented examples ran; want the Stripe and GitHub Slack messages and a configuration", ran)
	}
}

func checkExample(t *testing.T, kind, name, expr, want string) {
	t.Helper()
	sample, err := events.Load(kind, name)
	if err != nil {
		t.Fatal(err)
	}
	p, err := transform.Compile(expr)
	if err != nil {
		t.Fatalf("Compile: %v", err)
	}
	out, err := p.Apply(context.Background(), sample.Body)
	if err != nil {
		t.Fatalf("Apply: %v", err)
	}
	var got, exp any
	if err := json.Unmarshal(out, &got); err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal([]byte(want), &exp); err != nil {
		t.Fatalf("the documented output is not JSON: %v", err)
	}
	if diff := cmp.Diff(exp, got); diff != "" {
		t.Errorf("output differs from the docs (-docs +got):\n%s\ngot: %s", diff, strings.TrimSpace(string(out)))
	}
}

// TestDocumentedExamplesFarWithinTheBounds: an ordinary transform, each
// documented example on its sample event, is charged a small share of the
// deployed budget (128 MB, ten events at once), in bytes and in steps, so
// it never ends DEAD at the memory bound; the count is deterministic, the
// same on a busy machine as on an idle one.
func TestDocumentedExamplesFarWithinTheBounds(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	examples := exampleRE.FindAllStringSubmatch(string(raw), -1)
	if len(examples) == 0 {
		t.Fatal("no documented examples")
	}
	for _, m := range examples {
		p, err := transform.Compile(m[3], transform.WithBudget(transform.Budget(transform.DefaultMemoryMB, transform.DefaultConcurrency)))
		if err != nil {
			t.Fatal(err)
		}
		used, steps, err := transform.Charged(p, events.MustLoad(m[1], m[2]).Body)
		t.Logf("%s/%s: %d bytes charged in %d steps, of %d", m[1], m[2], used, steps, p.Bound())
		if err != nil || used > p.Bound()/10 {
			t.Errorf("%s/%s: charged %d bytes (%d steps), %v; want at most a tenth of the budget, %d", m[1], m[2], used, steps, err, p.Bound()/10)
		}
	}
}

// TestDocumentedExamplesSurviveABusyMachine: on a machine so busy that
// each step of an evaluation takes 1 ms (a fake clock: synctest), some
// twenty thousand times an idle one's, each documented example still
// transforms its sample event instead of ending it DEAD at the time
// bound: the wall clock is a last resort, the counted bound decides.
func TestDocumentedExamplesSurviveABusyMachine(t *testing.T) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range exampleRE.FindAllStringSubmatch(string(raw), -1) {
		p, err := transform.Compile(m[3])
		if err != nil {
			t.Fatal(err)
		}
		body := events.MustLoad(m[1], m[2]).Body
		synctest.Test(t, func(t *testing.T) {
			transform.SetStepHook(func() { time.Sleep(time.Millisecond) })
			defer transform.SetStepHook(nil)
			start := time.Now()
			_, steps, err := transform.Charged(p, body)
			if err != nil {
				t.Errorf("%s/%s on a busy machine (%d steps, %s): %v", m[1], m[2], steps, time.Since(start), err)
			}
		})
	}
}

// BenchmarkDocumentedExamples: what a documented Slack transform costs per
// event (decode, evaluate, encode) and once per process (compile).
func BenchmarkDocumentedExamples(b *testing.B) {
	raw, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		b.Fatal(err)
	}
	for _, m := range exampleRE.FindAllStringSubmatch(string(raw), -1) {
		sample := events.MustLoad(m[1], m[2])
		b.Run(m[1]+"/apply", func(b *testing.B) {
			p, err := transform.Compile(m[3])
			if err != nil {
				b.Fatal(err)
			}
			for b.Loop() {
				if _, err := p.Apply(context.Background(), sample.Body); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(m[1]+"/compile", func(b *testing.B) {
			for b.Loop() {
				if _, err := transform.Compile(m[3]); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
