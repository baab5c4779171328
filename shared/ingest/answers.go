package ingest

import (
	"net/http"
	"slices"

	"github.com/go-json-experiment/json/jsontext"

	"github.com/hookfan/hookfan/shared/config"
)

// Error codes of ingest's answers. They are part of the public contract:
// providers' dashboards and operators see them, and IngestRejected carries
// them as its Reason dimension. Never rename one.
const (
	CodeMethodNotAllowed       = "method_not_allowed"
	CodeUnknownSource          = "unknown_source"
	CodeBodyEmpty              = "body_empty"
	CodeBodyTooLarge           = "body_too_large"
	CodeBodyNotBase64          = "body_not_base64"
	CodeBodyNotJSON            = "body_not_json"
	CodeBodyDuplicateKey       = "body_duplicate_key"
	CodeSignatureMissing       = "signature_missing"
	CodeSignatureMalformed     = "signature_malformed"
	CodeSignatureInvalid       = "signature_invalid"
	CodeTimestampOutOfRange    = "timestamp_out_of_tolerance"
	CodeSecretNotSet           = "secret_not_set"
	CodeSecretStoreUnavailable = "secret_store_unavailable"
	CodeEventIDMissing         = "event_id_missing"
	CodeEventIDInvalid         = "event_id_invalid"
	CodeEventTypeMissing       = "event_type_missing"
	CodeEventTypeInvalid       = "event_type_invalid"
	CodeChallengeMissing       = "challenge_missing"
	CodePublishFailed          = "publish_failed"
	CodeReplayCheckUnavailable = "replay_check_unavailable"
	CodeRequestInFlight        = "request_in_flight"
	CodePayloadStoreFailed     = "payload_store_failed"
)

// answer is the HTTP status and the short human text of an error code.
type answer struct {
	status  int
	message string
}

// answers is the table of error answers (documented in docs/providers.md#answers).
var answers = map[string]answer{
	CodeMethodNotAllowed:       {http.StatusMethodNotAllowed, "Webhooks must be sent with POST."},
	CodeUnknownSource:          {http.StatusNotFound, "No webhook source is configured under this name."},
	CodeBodyEmpty:              {http.StatusBadRequest, "The request body is empty."},
	CodeBodyTooLarge:           {http.StatusRequestEntityTooLarge, "The request body is larger than this source accepts."},
	CodeBodyNotBase64:          {http.StatusBadRequest, "The request body could not be decoded."},
	CodeBodyNotJSON:            {http.StatusBadRequest, "The request body is not exactly one JSON document."},
	CodeBodyDuplicateKey:       {http.StatusBadRequest, "The request body repeats a key the event id or type is read from."},
	CodeSignatureMissing:       {http.StatusUnauthorized, "A signature header is missing."},
	CodeSignatureMalformed:     {http.StatusUnauthorized, "A signature header is malformed or carries no supported signature version."},
	CodeSignatureInvalid:       {http.StatusUnauthorized, "The signature does not match."},
	CodeTimestampOutOfRange:    {http.StatusUnauthorized, "The signed timestamp is outside the accepted tolerance."},
	CodeSecretNotSet:           {http.StatusUnauthorized, "This source has no usable signing secret yet."},
	CodeSecretStoreUnavailable: {http.StatusServiceUnavailable, "The signing secret could not be read; retry later."},
	CodeEventIDMissing:         {http.StatusBadRequest, "The event id could not be found in the request."},
	CodeEventIDInvalid:         {http.StatusBadRequest, "The event id is empty, longer than 256 bytes, not UTF-8, or holds control characters or characters SQS refuses."},
	CodeEventTypeMissing:       {http.StatusBadRequest, "The event type could not be found in the request."},
	CodeEventTypeInvalid:       {http.StatusBadRequest, "The event type is empty, longer than 256 bytes, not UTF-8, or holds control characters or characters SQS refuses."},
	CodeChallengeMissing:       {http.StatusBadRequest, "The url_verification request carries no challenge string."},
	CodePublishFailed:          {http.StatusServiceUnavailable, "The event could not be queued; retry later."},
	CodeReplayCheckUnavailable: {http.StatusServiceUnavailable, "The event could not be checked against earlier requests; retry later."},
	CodeRequestInFlight:        {http.StatusServiceUnavailable, "The same request is being accepted right now; retry later."},
	CodePayloadStoreFailed:     {http.StatusServiceUnavailable, "The event's body could not be stored; retry later."},
}

// errorBodies holds each code's JSON body, {"error":{"code":…,"message":…}},
// rendered once (without reflection: encoding/json's first Marshal of a
// type costs every cold start about 0.1 ms).
var errorBodies = func() map[string]string {
	m := make(map[string]string, len(answers))
	for code, a := range answers {
		b := []byte(`{"error":{"code":`)
		b, _ = jsontext.AppendQuote(b, code)
		b = append(b, `,"message":`...)
		b, _ = jsontext.AppendQuote(b, a.message)
		m[code] = string(append(b, "}}"...))
	}
	return m
}()

// acceptedBody is the 202 answer's body, {"id":"<id>"}: an id is "evt_"
// and hex digits, with nothing to escape.
func acceptedBody(id string) string { return `{"id":"` + id + `"}` }

// ServerErrorCodes are the codes ingest can answer source s of cfg with a
// 5xx, sorted: what the provider is asked to retry, and what pages an
// operator (the stack's IngestFailed alarms). The replay codes need the
// source's replay protection; CodePayloadStoreFailed needs the payload
// store, which is the deployment's (cfg.LargePayloads), not the source's:
// once some source takes large bodies, any source's body whose message
// does not fit one SNS message (a binary body, a third larger as base64)
// is stored too. Every other 5xx code can reach any source.
// CodePublishFailed counts as IngestPublishFailed, the others as
// IngestRejected with their Reason.
func ServerErrorCodes(cfg *config.Config, s config.Source) []string {
	var codes []string
	for code, a := range answers {
		if a.status < http.StatusInternalServerError {
			continue
		}
		switch code {
		case CodeReplayCheckUnavailable, CodeRequestInFlight:
			if s.ReplayWindow() == 0 {
				continue
			}
		case CodePayloadStoreFailed:
			if !cfg.LargePayloads() {
				continue
			}
		}
		codes = append(codes, code)
	}
	slices.Sort(codes)
	return codes
}
