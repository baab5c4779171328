package config

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

// TestIngestReservedConcurrency: the reservation is off by default; when
// set, it must cover the burst limits of every route that reaches ingest
// (two sources and the catch-all at 200 by default: 600) and fit the
// default account quota beside the 100 executions Lambda keeps unreserved.
func TestIngestReservedConcurrency(t *testing.T) {
	cfg := func(ingest, limits string) string {
		if limits != "" {
			limits = `, "limits": ` + limits
		}
		return `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "s"}},
		  {"name": "github", "verify": {"kind": "github", "secretName": "g"}` + limits + `}],
		  "api": {"burstLimit": 200}` + ingest + `}`
	}
	valid := []struct {
		name, ingest, limits string
		want                 int
	}{
		{"default: nothing reserved", "", "", 0},
		{"explicit 0", `, "ingest": {"reservedConcurrency": 0}`, "", 0},
		{"the bursts added up", `, "ingest": {"reservedConcurrency": 600}`, "", 600},
		{"a lower burst, a smaller reservation", `, "ingest": {"reservedConcurrency": 450}`, `{"burstLimit": 50}`, 450},
		{"the ceiling", `, "ingest": {"reservedConcurrency": 900}`, "", 900},
	}
	for _, tt := range valid {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(cfg(tt.ingest, tt.limits)))
			if err != nil {
				t.Fatal(err)
			}
			if c.Ingest.ReservedConcurrency != tt.want {
				t.Errorf("reservedConcurrency = %d, want %d", c.Ingest.ReservedConcurrency, tt.want)
			}
		})
	}
	invalid := []struct {
		name, ingest, limits, want string
	}{
		{"below the bursts", `, "ingest": {"reservedConcurrency": 100}`, "",
			"ingest.reservedConcurrency: 100 is below 600, the burst limits of the API's routes added up (api.burstLimit and each sources[].limits.burstLimit): a burst the API admits would be throttled; use at least 600, or lower the burst limits"},
		{"negative", `, "ingest": {"reservedConcurrency": -1}`, "",
			"ingest.reservedConcurrency: -1 is out of range; use 0 (reserve nothing, the default) or 600 to 900"},
		{"over the default quota", `, "ingest": {"reservedConcurrency": 901}`, "",
			"ingest.reservedConcurrency: 901 is out of range; use 0 (reserve nothing, the default) or 600 to 900"},
		{"bursts no reservation can cover", `, "ingest": {"reservedConcurrency": 900}`, `{"burstLimit": 600}`,
			"ingest.reservedConcurrency: 900 cannot cover the API's burst limits added up (1000, over the 900 a default account can reserve); use 0 (reserve nothing), or lower api.burstLimit and sources[].limits.burstLimit to at most 900 together"},
		{"unknown field", `, "ingest": {"reserved": 10}`, "",
			`ingest.reserved: unknown field; did you mean reservedConcurrency?`},
	}
	for _, tt := range invalid {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(cfg(tt.ingest, tt.limits)))
			if err == nil {
				t.Fatal("Parse accepted it")
			}
			if diff := cmp.Diff([]string{tt.want}, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
