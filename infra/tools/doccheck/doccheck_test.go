package doccheck_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/infra/tools/doccheck"
)

// repoRoot is the repository, two levels up from this package.
const repoRoot = "../../.."

// TestRepositoryDocs is the docs' link check: README.md and every page in
// docs/ link only to files and anchors that exist, name only make targets
// the Makefile has, and the README links to every page in docs/.
func TestRepositoryDocs(t *testing.T) {
	targets, err := doccheck.MakefileTargets(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"dev", "test", "dev-stop", "build-ingest"} {
		if !targets[want] {
			t.Fatalf("the Makefile's targets as read lack %q: %v", want, doccheck.Sorted(targets))
		}
	}
	docs, err := filepath.Glob(filepath.Join(repoRoot, "docs", "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(docs) == 0 {
		t.Fatal("no pages in docs/")
	}
	pages := []string{"README.md"}
	for _, d := range docs {
		pages = append(pages, "docs/"+filepath.Base(d))
	}
	c := &doccheck.Checker{Root: repoRoot, Targets: targets}
	problems, err := c.Check(pages)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}

	readme, err := os.ReadFile(filepath.Join(repoRoot, "README.md"))
	if err != nil {
		t.Fatal(err)
	}
	linked := map[string]bool{}
	for _, l := range doccheck.Parse("README.md", readme).Links {
		file, _, _ := strings.Cut(l.Text, "#")
		linked[filepath.Clean(file)] = true
	}
	for _, p := range pages[1:] {
		if !linked[filepath.FromSlash(p)] {
			t.Errorf("README.md does not link to %s: every reader's page is one click from the README", p)
		}
	}
}

func TestSlug(t *testing.T) {
	for title, want := range map[string]string{
		"Run it locally":                       "run-it-locally",
		"`make dev` and the emulator":          "make-dev-and-the-emulator",
		"401s: what each code means":           "401s-what-each-code-means",
		"Redrive a DLQ (console)":              "redrive-a-dlq-console",
		"REST or HTTP API?":                    "rest-or-http-api",
		"**Bold** and [a link](other.md) here": "bold-and-a-link-here",
		"Ünïcode — dashes – stay_put":          "ünïcode--dashes--stay_put",
		"`DeadLettersAlarm` (per destination)": "deadlettersalarm-per-destination",
	} {
		if got := doccheck.Slug(title); got != want {
			t.Errorf("Slug(%q) = %q, want %q", title, got, want)
		}
	}
}

func TestParse(t *testing.T) {
	doc := strings.Join([]string{
		"# Title",
		"See [the guide](guide.md#setup) and ![a diagram](img/d.png \"title\").",
		"Code is not a link: `[x](nowhere.md)`, but [`make dev`](local.md) is.",
		"<a id=\"custom-anchor\"></a>",
		"## Title",
		"```sh",
		"make dev # [not](a-link.md)",
		"```",
		"[ref]: ref.md#part",
		"~~~",
		"```",
		"still code",
		"~~~",
		"<a href=\"html.md\">html</a>",
	}, "\n")
	p := doccheck.Parse("docs/page.md", []byte(doc))
	want := []doccheck.Ref{{2, "guide.md#setup"}, {2, "img/d.png"}, {3, "local.md"}, {9, "ref.md#part"}, {14, "html.md"}}
	if diff := cmp.Diff(want, p.Links); diff != "" {
		t.Errorf("links (-want +got):\n%s", diff)
	}
	wantCode := []doccheck.Ref{{3, "[x](nowhere.md)"}, {3, "make dev"}, {7, "make dev # [not](a-link.md)"}, {11, "```"}, {12, "still code"}}
	if diff := cmp.Diff(wantCode, p.Code); diff != "" {
		t.Errorf("code (-want +got):\n%s", diff)
	}
	for _, a := range []string{"title", "title-1", "custom-anchor"} {
		if !p.Anchors[a] {
			t.Errorf("anchor %q missing from %v", a, p.Anchors)
		}
	}
}

func TestMakeTargets(t *testing.T) {
	for code, want := range map[string][]string{
		"make dev":                  {"dev"},
		"make dev-stop && make dev": {"dev-stop", "dev"},
		`make ops ARGS="status stripe:evt_1 --max 3"`:             {"ops"},
		"AWS_ENDPOINT_URL=http://localhost:4566 make integration": {"integration"},
		"make LOAD_EVENTS=100 load   # slower":                    {"load"},
		"make -C . -j2 build-ingest build-deliver":                {"build-ingest", "build-deliver"},
		"make build-<name>":                                       nil,
		"buf := make([]byte, 64)":                                 nil,
		"go run ./infra/local; make receive | tee log":            {"receive"},
		"echo make dev":                                           nil,
		"make":                                                    nil,
	} {
		if got := doccheck.MakeTargets(code); !slices.Equal(got, want) {
			t.Errorf("MakeTargets(%q) = %q, want %q", code, got, want)
		}
	}
}

// TestCheckFindsBrokenReferences runs the checker on a small tree with one
// of each kind of broken reference, and a page holding only good ones.
func TestCheckFindsBrokenReferences(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		file := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("README.md", strings.Join([]string{
		"# Project",
		"[ops](docs/ops.md#redrive-a-dlq), [top](#project), [code](src/main.go#L3), [dir](docs/), [site](https://example.com/x#y)",
		"Run `make dev`, then `make test`.",
	}, "\n"))
	write("src/main.go", "package main\n")
	write("docs/ops.md", "# Operations\n## Redrive a DLQ\nBack to [the README](../README.md#project).\n")
	write("docs/broken.md", strings.Join([]string{
		"# Broken",
		"[gone](missing.md)",
		"[bad anchor](ops.md#no-such-heading)",
		"[self](#nowhere)",
		"[outside](../../secret.md)",
		"[dir anchor](../docs/#x)",
		"```sh",
		"make deploy && make dev",
		"```",
	}, "\n"))
	c := &doccheck.Checker{Root: root, Targets: map[string]bool{"dev": true, "test": true}}

	good, err := c.Check([]string{"README.md", "docs/ops.md"})
	if err != nil {
		t.Fatal(err)
	}
	if len(good) != 0 {
		t.Errorf("problems on good pages: %v", good)
	}

	bad, err := c.Check([]string{"docs/broken.md"})
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range bad {
		got = append(got, p.String())
	}
	want := []string{
		`docs/broken.md:2: link "missing.md": no file docs/missing.md`,
		`docs/broken.md:3: link "ops.md#no-such-heading": docs/ops.md has no heading or anchor "no-such-heading"`,
		`docs/broken.md:4: link "#nowhere": docs/broken.md has no heading or anchor "nowhere"`,
		`docs/broken.md:5: link "../../secret.md" leaves the repository`,
		`docs/broken.md:6: link "../docs/#x": docs is a directory, it has no anchors`,
		`docs/broken.md:8: make deploy: the Makefile has no target "deploy"`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	if _, err := c.Check([]string{"docs/absent.md"}); err == nil {
		t.Error("checking a page that does not exist: no error")
	}
}

func TestMakefileTargetsOfAMakefile(t *testing.T) {
	dir := t.TempDir()
	mk := "FNS := a b\n.PHONY: all $(FNS:%=build-%)\nall: ## everything\n\t@true\n$(FNS:%=build-%): build-%:\n\t@echo $*\nX := 1\nhelp:\n\t@true\n"
	if err := os.WriteFile(filepath.Join(dir, "Makefile"), []byte(mk), 0o644); err != nil {
		t.Fatal(err)
	}
	got, err := doccheck.MakefileTargets(dir)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"all", "build-a", "build-b", "help"}, doccheck.Sorted(got)); diff != "" {
		t.Errorf("targets (-want +got):\n%s", diff)
	}
	if _, err := doccheck.MakefileTargets(t.TempDir()); err == nil {
		t.Error("a directory without a Makefile: no error")
	}
}

// TestGoPointsIntoDocs: every docs/<page>.md#anchor a string of the Go code
// names (alarm descriptions, suppression reasons, errors) exists.
func TestGoPointsIntoDocs(t *testing.T) {
	files, err := doccheck.GoFiles(repoRoot)
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Contains(files, "infra/stack/lane.go") || slices.Contains(files, "infra/tools/doccheck/doccheck_test.go") {
		t.Fatalf("GoFiles(%s) = %d files; want the code (infra/stack/lane.go) without the tests", repoRoot, len(files))
	}
	c := &doccheck.Checker{Root: repoRoot}
	problems, err := c.CheckGo(files)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range problems {
		t.Error(p)
	}
}

// TestCheckGoFindsBrokenPointers runs the Go check on a small tree: a file
// whose strings point at a missing page and a missing anchor, and pointers
// that resolve (a page alone, an anchor, a raw string, a comment is not read).
func TestCheckGoFindsBrokenPointers(t *testing.T) {
	root := t.TempDir()
	write := func(name, text string) {
		t.Helper()
		file := filepath.Join(root, filepath.FromSlash(name))
		if err := os.MkdirAll(filepath.Dir(file), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(file, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("docs/operations.md", "# Operations\n## Redrive a DLQ\n## Paused lanes\n")
	write("infra/stack/alarms.go", strings.Join([]string{
		"package stack",
		"",
		"// A comment naming docs/nowhere.md#x is not a string.",
		`const dlq = "redrive it (docs/operations.md#redrive-a-dlq)."`,
		"var paused = `see docs/operations.md#paused-lanes, docs/operations.md`",
		`var gone = fmt.Sprintf("%s (docs/operations.md#redrive-a-queue)", "x")`,
		`var missing = "see docs/runbook.md#alarms"`,
		"",
	}, "\n"))
	write("infra/stack/alarms_test.go", "package stack\n\nconst tree = \"docs/ops.md#only-in-a-test-tree\"\n")
	write("testdata/x.go", "package x\n\nconst y = \"docs/none.md\"\n")
	write(".hidden/x.go", "package x\n\nconst y = \"docs/none.md\"\n")

	files, err := doccheck.GoFiles(root)
	if err != nil {
		t.Fatal(err)
	}
	if diff := cmp.Diff([]string{"infra/stack/alarms.go"}, files); diff != "" {
		t.Errorf("GoFiles (-want +got):\n%s", diff)
	}
	c := &doccheck.Checker{Root: root}
	problems, err := c.CheckGo(files)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, p := range problems {
		got = append(got, p.String())
	}
	want := []string{
		`infra/stack/alarms.go:6: string "docs/operations.md#redrive-a-queue": docs/operations.md has no heading or anchor "redrive-a-queue"`,
		`infra/stack/alarms.go:7: string "docs/runbook.md#alarms": no file docs/runbook.md`,
	}
	if diff := cmp.Diff(want, got); diff != "" {
		t.Errorf("problems (-want +got):\n%s", diff)
	}

	write("infra/stack/broken.go", "package stack\n\nconst s = \"unterminated\n")
	if _, err := c.CheckGo([]string{"infra/stack/broken.go"}); err == nil {
		t.Error("a file that does not scan: no error")
	}
}
