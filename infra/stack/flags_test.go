package stack_test

import (
	"archive/tar"
	"compress/gzip"
	"encoding/json"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"sort"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/infra/stack"
)

// cdkJSON is the project's cdk.json, seen from this package.
const cdkJSON = "../../cdk.json"

// flagsContext is cdk.json's feature flags, for the tests' apps: the stack
// is tested as cdk deploy synthesizes it.
func flagsContext(t testing.TB) *map[string]any {
	t.Helper()
	ctx, err := stack.CDKJSONContext(cdkJSON)
	if err != nil {
		t.Fatal(err)
	}
	flags := map[string]any{}
	for k, v := range ctx {
		if strings.HasPrefix(k, "@aws-cdk") {
			flags[k] = v
		}
	}
	if len(flags) == 0 {
		t.Fatalf("%s sets no feature flags", cdkJSON)
	}
	return &flags
}

// TestFeatureFlagsAreRecommended compares cdk.json's feature flags with the
// recommended-feature-flags.json shipped in the aws-cdk-lib of go.mod's
// aws-cdk-go (what cdk init writes for that version): after a CDK upgrade
// it names the flags to add, change or drop.
func TestFeatureFlagsAreRecommended(t *testing.T) {
	out, err := exec.Command("go", "list", "-m", "-f", "{{.Dir}}", "github.com/aws/aws-cdk-go/awscdk/v2").Output()
	if err != nil {
		t.Fatalf("go list the CDK module: %v", err)
	}
	tarballs, _ := filepath.Glob(filepath.Join(strings.TrimSpace(string(out)), "jsii", "aws-cdk-lib-*.tgz"))
	if len(tarballs) != 1 {
		t.Fatalf("want one aws-cdk-lib tarball in the CDK module, found %v", tarballs)
	}
	recommended := readRecommended(t, tarballs[0])
	ctx, err := stack.CDKJSONContext(cdkJSON)
	if err != nil {
		t.Fatal(err)
	}
	var problems []string
	for k, want := range recommended {
		got, ok := ctx[k]
		switch {
		case !ok:
			problems = append(problems, "missing "+k)
		case !reflect.DeepEqual(got, want):
			problems = append(problems, "changed "+k)
		}
	}
	for k := range ctx {
		if _, ok := recommended[k]; !ok && strings.HasPrefix(k, "@aws-cdk") {
			problems = append(problems, "not recommended any more "+k)
		}
	}
	sort.Strings(problems)
	if len(problems) > 0 {
		t.Errorf("cdk.json's feature flags differ from %s's recommendations:\n  %s", filepath.Base(tarballs[0]), strings.Join(problems, "\n  "))
	}
}

func readRecommended(t *testing.T, tarball string) map[string]any {
	t.Helper()
	f, err := os.Open(tarball)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	gz, err := gzip.NewReader(f)
	if err != nil {
		t.Fatal(err)
	}
	tr := tar.NewReader(gz)
	for {
		h, err := tr.Next()
		if err == io.EOF {
			t.Fatalf("%s holds no package/recommended-feature-flags.json", tarball)
		}
		if err != nil {
			t.Fatal(err)
		}
		if h.Name != "package/recommended-feature-flags.json" {
			continue
		}
		var flags map[string]any
		if err := json.NewDecoder(tr).Decode(&flags); err != nil {
			t.Fatal(err)
		}
		return flags
	}
}

func TestCDKJSONContext(t *testing.T) {
	dir := t.TempDir()
	if ctx, err := stack.CDKJSONContext(filepath.Join(dir, "none.json")); ctx != nil || err != nil {
		t.Errorf("missing file: %v, %v; want nothing", ctx, err)
	}
	bad := filepath.Join(dir, "bad.json")
	if err := os.WriteFile(bad, []byte(`{"context": [1]}`), 0o600); err != nil {
		t.Fatal(err)
	}
	if _, err := stack.CDKJSONContext(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Errorf("malformed file: %v; want an error naming it", err)
	}
	ctx, err := stack.CDKJSONContext(cdkJSON)
	if err != nil || ctx["hookfan"] == nil || ctx["@aws-cdk/aws-iam:minimizePolicies"] != true {
		t.Errorf("cdk.json: %v, %v", ctx, err)
	}
}
