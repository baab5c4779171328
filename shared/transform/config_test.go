package transform_test

import (
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/transform"
)

func TestCheckConfig(t *testing.T) {
	const head = `{"sources": [{"name": "stripe", "verify": {"kind": "stripe", "secretName": "hookfan/sources/stripe"}}],
	  "destinations": [{"name": "d", "url": "https://d.example.com/hooks"`
	tests := []struct {
		name, extra string
		want        []string
	}{
		{"no transform", ``, nil},
		{"a transform that compiles", `, "transform": "{text: .type}"`, nil},
		{"transform does not parse", `, "transform": "{text: }"`, []string{
			`destinations[0].transform: "{text: }" does not parse: unexpected token "}" (near byte 8); fix the jq expression (docs/configuration.md#destination-transform has examples; test it with jq -c '<expression>' < event.json)`,
		}},
		{"transform does not compile", `, "transform": "{text: .a | nosuch}"`, []string{
			`destinations[0].transform: "{text: .a | nosuch}" does not compile: function not defined: nosuch/0; fix the jq expression (docs/configuration.md#destination-transform has examples; test it with jq -c '<expression>' < event.json)`,
		}},
		{"transform reads input", `, "transform": "input"`, []string{
			`destinations[0].transform: "input" does not compile: input(s)/0 is not allowed; fix the jq expression (docs/configuration.md#destination-transform has examples; test it with jq -c '<expression>' < event.json)`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := config.Parse([]byte(head + tt.extra + `}]}`))
			if err != nil {
				t.Fatalf("Parse: %v", err)
			}
			var got []string
			if err := transform.CheckConfig(c); err != nil {
				got = strings.Split(err.Error(), "\n")
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}
