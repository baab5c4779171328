package archive

import (
	"context"
	"strings"
	"testing"
	"time"
)

// BenchmarkScan reads an hour of archive: 10 objects of 100 records, each
// a 1 KiB body in its envelope, from a memory bucket (the reader's own
// cost: gunzip, line splitting, JSON decoding, filtering).
func BenchmarkScan(b *testing.B) {
	bucket := NewMemoryBucket()
	at := time.Date(2026, 5, 1, 10, 0, 0, 0, time.UTC)
	body := `{"data":"` + strings.Repeat("x", 1014) + `"}`
	size := 0
	for o := range 10 {
		var records [][]byte
		for r := range 100 {
			rec := envelope("evt_"+string(rune('a'+o))+string(rune('a'+r%26))+string(rune('a'+r/26)), "stripe", "invoice.paid", at.Add(time.Duration(o)*time.Minute), body, nil)
			size += len(rec)
			records = append(records, rec)
		}
		if _, err := NewWriter(bucket, "b", "bench").Write(context.Background(), records, at.Add(time.Duration(o)*time.Minute)); err != nil {
			b.Fatal(err)
		}
	}
	r := NewReader(bucket, "b")
	q := Query{Since: at, Until: at.Add(time.Hour)}
	b.SetBytes(int64(size))
	b.ResetTimer()
	for b.Loop() {
		n := 0
		if _, err := r.Scan(context.Background(), q, func(Event) error { n++; return nil }, Options{}); err != nil || n != 1000 {
			b.Fatalf("%d events, %v", n, err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/1000, "ns/record")
}
