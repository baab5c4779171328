package operator

import (
	"bytes"
	"context"
	"go/parser"
	"go/token"
	"io"
	"maps"
	"slices"
	"strings"
	"testing"
	"unicode"

	"github.com/google/go-cmp/cmp"
)

// usageCommands is the commands Usage lists: the first word of each line
// of its Commands section indented by two spaces (deeper lines continue a
// command).
func usageCommands(t *testing.T) []string {
	t.Helper()
	_, section, ok := strings.Cut(Usage, "\nCommands:\n")
	section, _, ok2 := strings.Cut(section, "\n\n")
	if !ok || !ok2 {
		t.Fatalf("Usage has no Commands section ending in a blank line:\n%s", Usage)
	}
	var names []string
	for line := range strings.SplitSeq(section, "\n") {
		if rest, ok := strings.CutPrefix(line, "  "); ok && rest != "" && rest[0] != ' ' {
			names = append(names, strings.Fields(rest)[0])
		}
	}
	return names
}

// TestUsageListsEveryCommand ties the command table to the help: every
// command run dispatches to is listed in Usage, once, and every command
// Usage lists is in the table.
func TestUsageListsEveryCommand(t *testing.T) {
	listed := usageCommands(t)
	if len(listed) < 8 {
		t.Fatalf("read %d commands from Usage: %q", len(listed), listed)
	}
	sorted := slices.Sorted(slices.Values(listed))
	if compact := slices.Compact(slices.Clone(sorted)); len(compact) != len(sorted) {
		t.Errorf("Usage lists a command twice: %q", listed)
	}
	if diff := cmp.Diff(slices.Sorted(maps.Keys(commands)), slices.Compact(sorted)); diff != "" {
		t.Errorf("commands in the table (-) and in Usage (+):\n%s", diff)
	}
}

// TestPackageCommentsNameEveryCommand: the package comments of the
// command (infra/ops) and of this package list the commands too; every
// command of the table is named there as a word.
func TestPackageCommentsNameEveryCommand(t *testing.T) {
	for _, file := range []string{"../main.go", "operator.go"} {
		f, err := parser.ParseFile(token.NewFileSet(), file, nil, parser.PackageClauseOnly|parser.ParseComments)
		if err != nil {
			t.Fatal(err)
		}
		if f.Doc == nil {
			t.Fatalf("%s has no package comment", file)
		}
		words := map[string]bool{}
		for w := range strings.FieldsFuncSeq(f.Doc.Text(), func(r rune) bool { return !unicode.IsLetter(r) }) {
			words[w] = true
		}
		for _, name := range slices.Sorted(maps.Keys(commands)) {
			if !words[name] {
				t.Errorf("%s: the package comment does not name the %s command", file, name)
			}
		}
	}
}

// TestDispatchUsesTheTable: run finds every command of the table by its
// name (an unknown flag is then the command's own complaint, before
// anything is connected to), and refuses a name the table lacks.
func TestDispatchUsesTheTable(t *testing.T) {
	for name := range commands {
		var out, errOut bytes.Buffer
		code := Main(context.Background(), []string{"--state-dir", t.TempDir(), name, "--no-such-flag"}, &out, &errOut)
		if code != 2 || !strings.Contains(errOut.String(), "flag provided but not defined: -no-such-flag") {
			t.Errorf("%s --no-such-flag: exit %d, stderr %q; want the command's flag error", name, code, errOut.String())
		}
	}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"statuses"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), `unknown command "statuses"`) {
		t.Errorf("statuses: exit %d, stderr %q", code, errOut.String())
	}
}

// TestConsoleCommandLine: ops console refuses a listen address off the
// loopback, and arguments, before connecting to anything; without a
// console to serve (Main), it says where the console is served.
func TestConsoleCommandLine(t *testing.T) {
	served := false
	serve := func(context.Context, *Operator, string, bool, io.Writer) error { served = true; return nil }
	for _, c := range []struct {
		args []string
		want string
	}{
		{[]string{"console", "--listen", "0.0.0.0:8080"}, `--listen "0.0.0.0:8080": the console listens on a loopback address only`},
		{[]string{"console", "--listen", "192.168.1.5:0"}, "loopback address only"},
		{[]string{"console", "--listen", "example.com:80"}, "loopback address only"},
		{[]string{"console", "--listen", "8080"}, "want host:port on a loopback address"},
		{[]string{"console", "lanes"}, `console takes flags only; unexpected "lanes"`},
	} {
		var out, errOut bytes.Buffer
		code := MainWith(context.Background(), append([]string{"--state-dir", t.TempDir()}, c.args...), &out, &errOut, serve)
		if code != 2 || !strings.Contains(errOut.String(), c.want) {
			t.Errorf("%q: exit %d, stderr %q; want 2 and %q", c.args, code, errOut.String(), c.want)
		}
	}
	if served {
		t.Error("a refused command line started the console")
	}
	var out, errOut bytes.Buffer
	if code := Main(context.Background(), []string{"console"}, &out, &errOut); code != 2 || !strings.Contains(errOut.String(), "served by the ops command") {
		t.Errorf("console through Main: exit %d, stderr %q", code, errOut.String())
	}
}
