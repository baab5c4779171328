package config

import (
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// TestEveryTargetKindIsComplete: each AWS target kind names itself once
// and says everything validation, the stack and the docs ask of it: its
// example ARN is one of its own, its IAM action is its service's, and the
// AWS targets table of docs/configuration.md has its row (with its call),
// and no row for a type that is not a kind. The deliver function's senders
// (TestEverySenderIsRegistered) and the cost model
// (TestEveryTargetKindIsPriced) check their side of the same table.
func TestEveryTargetKindIsComplete(t *testing.T) {
	kinds := TargetKinds()
	if len(kinds) == 0 {
		t.Fatal("no target kinds")
	}
	doc, err := os.ReadFile("../../docs/configuration.md")
	if err != nil {
		t.Fatal(err)
	}
	section := string(doc)
	if i := strings.Index(section, "\n## AWS targets\n"); i >= 0 {
		section = section[i+1:]
		if j := strings.Index(section[3:], "\n## "); j >= 0 {
			section = section[:j+3]
		}
	} else {
		t.Fatal("docs/configuration.md has no AWS targets section")
	}
	var types []string
	for _, k := range kinds {
		if k.Type == "" || k.Service == "" || k.Resource == nil || k.Example == "" || k.Action == "" || k.Call == "" {
			t.Errorf("kind %q is incomplete: %+v", k.Type, k)
			continue
		}
		if slices.Contains(types, k.Type) || k.Type == TypeHTTPS {
			t.Errorf("kind %q registered twice, or as https", k.Type)
		}
		types = append(types, k.Type)
		if got, ok := LookupTargetKind(k.Type); !ok || got.Type != k.Type || !(Destination{Type: k.Type}).AWSTarget() {
			t.Errorf("LookupTargetKind(%q) = %q, %v", k.Type, got.Type, ok)
		}
		example, _, _ := strings.Cut(k.Example, " ")
		if a, err := ParseARN(example); err != nil || a.Service != k.Service || !k.Resource(a.Resource) {
			t.Errorf("kind %q: its example %q is not one of its ARNs (%+v, %v)", k.Type, example, a, err)
		}
		if !strings.HasPrefix(k.Action, k.Service+":") {
			t.Errorf("kind %q: action %q is not one of service %s's", k.Type, k.Action, k.Service)
		}
		row := "\n| `" + k.Type + "` |"
		i := strings.Index(section, row)
		if i < 0 {
			t.Errorf("docs/configuration.md#aws-targets has no row for %q", k.Type)
			continue
		}
		if line, _, _ := strings.Cut(section[i+1:], "\n"); !strings.Contains(line, "`"+k.Call+"`") {
			t.Errorf("docs/configuration.md#aws-targets: the row of %q does not name its call %s", k.Type, k.Call)
		}
	}
	for _, m := range regexp.MustCompile("\n\\| `([a-z0-9]+)` \\| [^\n]*arn:").FindAllStringSubmatch(section, -1) {
		if !slices.Contains(types, m[1]) {
			t.Errorf("docs/configuration.md#aws-targets has a row for %q, which is no target kind", m[1])
		}
	}
	if _, ok := LookupTargetKind(TypeHTTPS); ok {
		t.Error("https is a target kind")
	}
}
