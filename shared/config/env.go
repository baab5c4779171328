package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Environment variables both functions' contracts render (ingest.Env and
// delivery.Env, which name the rest of their variables beside them).
// Secrets never travel there: only secret names.
const (
	EnvMetricsSink = "HOOKFAN_METRICS_SINK" // "emf" or "cloudwatch"
	EnvLogLevel    = "HOOKFAN_LOG_LEVEL"    // "WARN" with functions.logLevel WARN; unset for INFO
	// EnvPayloadBucket names the bucket of bodies larger than one SNS
	// message; unset when no source takes such bodies.
	EnvPayloadBucket = "HOOKFAN_PAYLOAD_BUCKET"
	// EnvPayloadArchiveBucket names the archive bucket, where ingest writes
	// a copy of each such body and a deliver function reads it once the
	// payload bucket's lifecycle removed the object (with the archive on).
	EnvPayloadArchiveBucket = "HOOKFAN_PAYLOAD_ARCHIVE_BUCKET"
)

// EncodeSources renders sources for ingest's environment: what ingest needs, so
// without each source's limits, which the API enforces before ingest runs
// (and whose allow-lists would spend Lambda's 4 KB of environment).
func EncodeSources(s []Source) string { return mustJSON(IngestSources(s)) }

// IngestSources returns a copy of sources as ingest receives them: without
// their limits and reconciliation.
func IngestSources(sources []Source) []Source {
	out := slices.Clone(sources)
	for i := range out {
		out[i].Limits = SourceLimits{}
		out[i].Reconcile = nil
	}
	return out
}

// EncodeDestination renders a destination for a deliver function's
// environment.
func EncodeDestination(d Destination) string { return mustJSON(d) }

// DecodeSources reads and validates the sources handed to ingest in its
// environment variable name.
func DecodeSources(name, data string) ([]Source, error) {
	var s []Source
	if err := decodeStrict([]byte(data), &s, "sources"); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	var p problems
	seen := map[string]int{}
	for i := range s {
		// The API type is not known here; the CDK app checked each limit
		// against it, and the REST API's is the larger.
		s[i].validate(&p, fmt.Sprintf("sources[%d]", i), seen, i, API{Type: APITypeREST})
	}
	if err := errors.Join(p...); err != nil {
		return nil, fmt.Errorf("%s: %w", name, err)
	}
	return s, nil
}

// DecodeDestination reads and validates the destination handed to a deliver
// function in its environment variable name. Its filter's source names are
// taken as known: the filter is enforced by SNS, not by the function.
func DecodeDestination(name, data string) (Destination, error) {
	var d Destination
	if err := decodeStrict([]byte(data), &d, "destination"); err != nil {
		return Destination{}, fmt.Errorf("%s: %w", name, err)
	}
	known := map[string]int{}
	for i, s := range d.Filter.Sources {
		known[s] = i
	}
	var p problems
	d.validate(&p, "destination", map[string]int{}, 0, known)
	if err := errors.Join(p...); err != nil {
		return Destination{}, fmt.Errorf("%s: %w", name, err)
	}
	return d, nil
}

func mustJSON(v any) string {
	b, err := json.Marshal(v)
	if err != nil {
		panic(err) // config types hold only JSON-encodable values
	}
	return string(b)
}
