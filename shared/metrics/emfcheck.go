package metrics

import (
	"encoding/json"
	"errors"
	"fmt"
)

// ValidateEMF checks one log line against the CloudWatch Embedded Metric
// Format specification: an "_aws" object with an integer Timestamp and a
// CloudWatchMetrics array of directives, each with a Namespace (1-255
// chars), Dimensions (arrays of at most 30 dimension names, each naming a
// top-level string member) and Metrics (at most 100, each naming a top-level
// number or array of at most 100 numbers). Tests and tools use it to prove
// the EMF sink's output is what CloudWatch Logs will extract.
func ValidateEMF(line []byte) error {
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(line, &doc); err != nil {
		return fmt.Errorf("not a JSON object: %w", err)
	}
	rawAWS, ok := doc["_aws"]
	if !ok {
		return errors.New(`missing "_aws"`)
	}
	var meta struct {
		Timestamp         *json.Number `json:"Timestamp"`
		CloudWatchMetrics []struct {
			Namespace  string     `json:"Namespace"`
			Dimensions [][]string `json:"Dimensions"`
			Metrics    []struct {
				Name string `json:"Name"`
				Unit string `json:"Unit"`
			} `json:"Metrics"`
		} `json:"CloudWatchMetrics"`
	}
	if err := json.Unmarshal(rawAWS, &meta); err != nil {
		return fmt.Errorf(`"_aws": %w`, err)
	}
	if meta.Timestamp == nil {
		return errors.New(`"_aws.Timestamp" missing`)
	}
	if _, err := meta.Timestamp.Int64(); err != nil {
		return fmt.Errorf(`"_aws.Timestamp" %s is not an integer of epoch milliseconds`, *meta.Timestamp)
	}
	if len(meta.CloudWatchMetrics) == 0 {
		return errors.New(`"_aws.CloudWatchMetrics" is empty`)
	}
	for i, d := range meta.CloudWatchMetrics {
		if n := len(d.Namespace); n < 1 || n > 255 {
			return fmt.Errorf("directive %d: namespace length %d not in 1..255", i, n)
		}
		for _, set := range d.Dimensions {
			if len(set) > 30 {
				return fmt.Errorf("directive %d: dimension set of %d names exceeds 30", i, len(set))
			}
			for _, name := range set {
				var s string
				if err := json.Unmarshal(doc[name], &s); err != nil {
					return fmt.Errorf("directive %d: dimension %q is not a top-level string member", i, name)
				}
			}
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > 100 {
			return fmt.Errorf("directive %d: %d metrics, want 1..100", i, len(d.Metrics))
		}
		for _, m := range d.Metrics {
			raw, ok := doc[m.Name]
			if !ok {
				return fmt.Errorf("directive %d: metric %q has no top-level member", i, m.Name)
			}
			var one float64
			if json.Unmarshal(raw, &one) == nil {
				continue
			}
			var many []float64
			if err := json.Unmarshal(raw, &many); err != nil || len(many) == 0 || len(many) > 100 {
				return fmt.Errorf("directive %d: metric %q is not a number or an array of 1..100 numbers", i, m.Name)
			}
		}
	}
	return nil
}
