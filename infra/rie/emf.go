package rie

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"slices"
	"strconv"
	"time"

	cwtypes "github.com/aws/aws-sdk-go-v2/service/cloudwatch/types"

	"github.com/hookfan/hookfan/shared/metrics"
)

// Datum is one metric an Embedded Metric Format document defines: what
// CloudWatch Logs would put for it, one per metric and dimension set of
// each directive.
type Datum struct {
	Namespace  string
	Name       string
	Unit       cwtypes.StandardUnit // "" when the document names none (CloudWatch's None)
	Resolution int32                // StorageResolution: 1 (high) or 0 (the default, 60)
	Dimensions []metrics.Dimension  // in the order the dimension set names them
	Values     []float64
	Time       time.Time
}

// EMF limits (the CloudWatch Embedded Metric Format specification).
const (
	emfMaxDimensions = 30  // names in one dimension set
	emfMaxMetrics    = 100 // metrics in one directive
	emfMaxValues     = 100 // values of one metric
)

// ParseEMF reads one log line as CloudWatch Logs does. isEMF is false for
// a line that is not an EMF document (a JSON object without "_aws", or
// not JSON and not naming "_aws"): an ordinary log line, from which
// nothing is extracted. For an
// EMF document, err says why it is not valid EMF (CloudWatch Logs would
// extract nothing from it); otherwise data holds its metrics, in the
// order of its directives, their dimension sets and their metrics.
func ParseEMF(line []byte) (data []Datum, isEMF bool, err error) {
	line = bytes.TrimSpace(line)
	if len(line) == 0 || line[0] != '{' {
		return nil, false, nil
	}
	var doc map[string]json.RawMessage
	if err := json.Unmarshal(line, &doc); err != nil {
		if bytes.Contains(line, []byte(`"_aws"`)) {
			// Meant as one, most likely cut or interleaved: said, not skipped.
			return nil, true, fmt.Errorf("not a JSON object: %w", err)
		}
		return nil, false, nil
	}
	rawAWS, ok := doc["_aws"]
	if !ok {
		return nil, false, nil
	}
	data, err = parseDocument(doc, rawAWS)
	return data, true, err
}

// emfMeta is the "_aws" member.
type emfMeta struct {
	Timestamp         json.RawMessage `json:"Timestamp"`
	CloudWatchMetrics *[]struct {
		Namespace  *string     `json:"Namespace"`
		Dimensions *[][]string `json:"Dimensions"`
		Metrics    []struct {
			Name              *string `json:"Name"`
			Unit              *string `json:"Unit"`
			StorageResolution *int32  `json:"StorageResolution"`
		} `json:"Metrics"`
	} `json:"CloudWatchMetrics"`
}

func parseDocument(doc map[string]json.RawMessage, rawAWS json.RawMessage) ([]Datum, error) {
	var meta emfMeta
	if err := json.Unmarshal(rawAWS, &meta); err != nil {
		return nil, fmt.Errorf(`"_aws": %w`, err)
	}
	if meta.Timestamp == nil || isNull(meta.Timestamp) {
		return nil, errors.New(`"_aws.Timestamp" missing`)
	}
	// A JSON number in integer form: json.Number would take a string too.
	ms, err := strconv.ParseInt(string(meta.Timestamp), 10, 64)
	if err != nil {
		return nil, fmt.Errorf(`"_aws.Timestamp" %.40s is not a whole number of epoch milliseconds`, meta.Timestamp)
	}
	if meta.CloudWatchMetrics == nil || len(*meta.CloudWatchMetrics) == 0 {
		return nil, errors.New(`"_aws.CloudWatchMetrics" is missing or empty`)
	}
	at := time.UnixMilli(ms).UTC()
	var data []Datum
	for i, d := range *meta.CloudWatchMetrics {
		if d.Namespace == nil || len(*d.Namespace) < 1 || len(*d.Namespace) > 255 {
			return nil, fmt.Errorf("directive %d: Namespace missing or not 1 to 255 characters", i)
		}
		if d.Dimensions == nil || len(*d.Dimensions) == 0 {
			// Not guessed at: our own EMF writes one set, [[]] when it has
			// no dimension.
			return nil, fmt.Errorf("directive %d: no dimension set (write [[]] for a metric without dimensions)", i)
		}
		sets := make([][]metrics.Dimension, 0, len(*d.Dimensions))
		for _, names := range *d.Dimensions {
			if len(names) > emfMaxDimensions {
				return nil, fmt.Errorf("directive %d: a dimension set of %d names, more than %d", i, len(names), emfMaxDimensions)
			}
			set := make([]metrics.Dimension, 0, len(names))
			for _, name := range names {
				var value string
				if raw := doc[name]; isNull(raw) || json.Unmarshal(raw, &value) != nil || value == "" {
					return nil, fmt.Errorf("directive %d: dimension %q is not a non-empty string member of the document", i, name)
				}
				if slices.ContainsFunc(set, func(x metrics.Dimension) bool { return x.Name == name }) {
					return nil, fmt.Errorf("directive %d: dimension %q twice in one set", i, name)
				}
				set = append(set, metrics.Dimension{Name: name, Value: value})
			}
			sets = append(sets, set)
		}
		if len(d.Metrics) == 0 || len(d.Metrics) > emfMaxMetrics {
			return nil, fmt.Errorf("directive %d: %d metrics, want 1 to %d", i, len(d.Metrics), emfMaxMetrics)
		}
		for _, m := range d.Metrics {
			if m.Name == nil || *m.Name == "" {
				return nil, fmt.Errorf("directive %d: a metric without a Name", i)
			}
			name := *m.Name
			values, err := metricValues(doc[name])
			if err != nil {
				return nil, fmt.Errorf("directive %d: metric %q %w", i, name, err)
			}
			var unit cwtypes.StandardUnit
			if m.Unit != nil {
				unit = cwtypes.StandardUnit(*m.Unit)
				if !slices.Contains(unit.Values(), unit) {
					return nil, fmt.Errorf("directive %d: metric %q has the unit %q, not a CloudWatch unit", i, name, *m.Unit)
				}
			}
			var resolution int32
			if r := m.StorageResolution; r != nil {
				if *r != 1 && *r != 60 {
					return nil, fmt.Errorf("directive %d: metric %q has the StorageResolution %d; want 1 or 60", i, name, *r)
				}
				if *r == 1 {
					resolution = 1
				}
			}
			for _, set := range sets {
				data = append(data, Datum{Namespace: *d.Namespace, Name: name, Unit: unit, Resolution: resolution,
					Dimensions: set, Values: values, Time: at})
			}
		}
	}
	return data, nil
}

// metricValues reads a metric's member: a number, or an array of 1 to
// emfMaxValues numbers.
func metricValues(raw json.RawMessage) ([]float64, error) {
	if raw == nil {
		return nil, errors.New("has no member in the document")
	}
	if isNull(raw) {
		return nil, fmt.Errorf("is not a number or an array of 1 to %d numbers", emfMaxValues)
	}
	var one float64
	if json.Unmarshal(raw, &one) == nil {
		return []float64{one}, finite(one)
	}
	notNumbers := fmt.Errorf("is not a number or an array of 1 to %d numbers", emfMaxValues)
	var elems []json.RawMessage
	if err := json.Unmarshal(raw, &elems); err != nil || len(elems) == 0 || len(elems) > emfMaxValues {
		return nil, notNumbers
	}
	many := make([]float64, len(elems))
	for i, e := range elems {
		if isNull(e) || json.Unmarshal(e, &many[i]) != nil {
			return nil, notNumbers
		}
		if err := finite(many[i]); err != nil {
			return nil, err
		}
	}
	return many, nil
}

// finite refuses what JSON numbers can still hold and CloudWatch cannot:
// values past ±2^360 (PutMetricData's range).
func finite(v float64) error {
	if math.Abs(v) > 0x1p360 {
		return fmt.Errorf("has the value %g, outside CloudWatch's ±2^360", v)
	}
	return nil
}

// isNull reports a JSON null, which encoding/json decodes into a number
// or a string without an error.
func isNull(raw json.RawMessage) bool { return string(bytes.TrimSpace(raw)) == "null" }
