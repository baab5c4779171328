package bodyfilter

import (
	"crypto/sha256"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/go-json-experiment/json/jsontext"
)

// benchBody is a Stripe-like event grown to size bytes with line items.
func benchBody(size int) []byte {
	type item struct {
		ID, Description string
		Amount          int
	}
	doc := map[string]any{"id": "evt_1", "type": "payment_intent.succeeded",
		"data": map[string]any{"object": map[string]any{"id": "pi_1", "status": "succeeded", "amount": 4200, "currency": "usd"}}}
	one, _ := json.Marshal(item{ID: "li_100000", Description: strings.Repeat("widget ", 8), Amount: 100000})
	items := make([]item, 0, size/len(one)+1)
	for i := 0; i <= size/len(one); i++ {
		items = append(items, item{ID: fmt.Sprintf("li_%d", i), Description: strings.Repeat("widget ", 8), Amount: i})
	}
	doc["items"] = items
	b, _ := json.Marshal(doc)
	return b
}

// BenchmarkMatch measures the body filter on the deliver function's hot
// path against what any JSON reader pays (jsontext validating the whole
// body) and, for stored bodies, the SHA-256 check every large body gets.
// Budget: Match costs at most 2× the validation, reported as x_valid.
func BenchmarkMatch(b *testing.B) {
	f, err := Compile([]byte(`{"type": [{"prefix": "payment_intent."}], "data": {"object": {"amount": [{"numeric": [">=", 1000]}], "currency": [{"anything-but": ["eur"]}]}}}`))
	if err != nil {
		b.Fatal(err)
	}
	for _, size := range []int{1 << 10, 256 << 10, 4 << 20} {
		body := benchBody(size)
		var valid, match float64
		b.Run(fmt.Sprintf("%dKiB/validate", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			for b.Loop() {
				if !jsontext.Value(body).IsValid() {
					b.Fatal("invalid")
				}
			}
			valid = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		})
		b.Run(fmt.Sprintf("%dKiB/match", size>>10), func(b *testing.B) {
			b.SetBytes(int64(len(body)))
			b.ReportAllocs()
			for b.Loop() {
				if ok, err := f.Match(body); !ok {
					b.Fatal("no match", err)
				}
			}
			match = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
			if valid > 0 {
				b.ReportMetric(match/valid, "x_valid")
				if match > 2*valid && size > 1<<10 {
					b.Errorf("Match takes %.1f× a validation of the body, over the 2× budget", match/valid)
				}
			}
		})
		if size >= 256<<10 {
			b.Run(fmt.Sprintf("%dKiB/sha256", size>>10), func(b *testing.B) {
				b.SetBytes(int64(len(body)))
				for b.Loop() {
					sha256.Sum256(body)
				}
			})
		}
	}
}
