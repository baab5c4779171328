package config

import (
	"encoding/json"
	"errors"
	"fmt"
	"slices"
)

// Environment variables through which the CDK stack and the local stack hand
// each function its slice of the configuration. Secrets never travel here:
// only secret names.
const (
	EnvSources     = "HOOKFAN_SOURCES"      // ingest: JSON array of sources
	EnvTopicARN    = "HOOKFAN_TOPIC_ARN"    // ingest: where accepted events are published
	EnvDestination = "HOOKFAN_DESTINATION"  // deliver: JSON of its one destination
	EnvTableName   = "HOOKFAN_TABLE_NAME"   // deliver: the delivery-record table
	EnvQueueURL    = "HOOKFAN_QUEUE_URL"    // deliver: its queue, for ChangeMessageVisibility
	EnvQueueARN    = "HOOKFAN_QUEUE_ARN"    // deliver, when the lane pauses: its queue's ARN, to find its event source mapping
	EnvSecretID    = "HOOKFAN_SECRET_ID"    // deliver: its signing secret's name or ARN
	EnvRecordDays  = "HOOKFAN_RECORD_DAYS"  // deliver: delivery-record TTL in days
	EnvMetricsSink = "HOOKFAN_METRICS_SINK" // both: "emf" or "cloudwatch"
	EnvAPIType     = "HOOKFAN_API_TYPE"     // ingest: "rest" (proxy event v1, default) or "http" (payload v2)
	EnvTracing     = "HOOKFAN_TRACING"      // deliver: "sampled" or "all" when tracing is on (a traceparent header); unset when off
	EnvDedupeMode  = "HOOKFAN_DEDUPE_MODE"  // deliver: "check" for dedupe.mode check; unset for the default lease
	EnvLaneMetrics = "HOOKFAN_LANE_METRICS" // deliver: "aggregate" with metrics.laneDimensions false; unset for per-lane dimensions
	EnvLogLevel    = "HOOKFAN_LOG_LEVEL"    // both: "WARN" with functions.logLevel WARN; unset for INFO
	// EnvPayloadBucket names the bucket of bodies larger than one SNS
	// message (both functions); unset when no source takes such bodies.
	EnvPayloadBucket = "HOOKFAN_PAYLOAD_BUCKET"
	// EnvPayloadArchiveBucket names the archive bucket, where ingest writes
	// a copy of each such body and a deliver function reads it once the
	// payload bucket's lifecycle removed the object (both, with the archive on).
	EnvPayloadArchiveBucket = "HOOKFAN_PAYLOAD_ARCHIVE_BUCKET"
)

// EncodeSources renders sources for EnvSources: what ingest needs, so
// without each source's limits, which the API enforces before ingest runs
// (and whose allow-lists would spend Lambda's 4 KB of environment).
func EncodeSources(s []Source) string { return mustJSON(IngestSources(s)) }

// IngestSources returns a copy of sources as ingest receives them: without
// their limits.
func IngestSources(sources []Source) []Source {
	out := slices.Clone(sources)
	for i := range out {
		out[i].Limits = SourceLimits{}
	}
	return out
}

// EncodeDestination renders a destination for EnvDestination.
func EncodeDestination(d Destination) string { return mustJSON(d) }

// DecodeSources reads and validates the sources handed to ingest.
func DecodeSources(data string) ([]Source, error) {
	var s []Source
	if err := decodeStrict([]byte(data), &s, "sources"); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvSources, err)
	}
	var p problems
	seen := map[string]int{}
	for i := range s {
		// The API type is not known here; the CDK app checked each limit
		// against it, and the REST API's is the larger.
		s[i].validate(&p, fmt.Sprintf("sources[%d]", i), seen, i, API{Type: APITypeREST})
	}
	if err := errors.Join(p...); err != nil {
		return nil, fmt.Errorf("%s: %w", EnvSources, err)
	}
	return s, nil
}

// DecodeDestination reads and validates the destination handed to a deliver
// function. Its filter's source names are taken as known: the filter is
// enforced by SNS, not by the function.
func DecodeDestination(data string) (Destination, error) {
	var d Destination
	if err := decodeStrict([]byte(data), &d, "destination"); err != nil {
		return Destination{}, fmt.Errorf("%s: %w", EnvDestination, err)
	}
	known := map[string]int{}
	for i, s := range d.Filter.Sources {
		known[s] = i
	}
	var p problems
	d.validate(&p, "destination", map[string]int{}, 0, known)
	if err := errors.Join(p...); err != nil {
		return Destination{}, fmt.Errorf("%s: %w", EnvDestination, err)
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
