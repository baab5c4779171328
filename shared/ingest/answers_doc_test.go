package ingest

import (
	"os"
	"strconv"
	"strings"
	"testing"
)

// TestEveryAnswerIsDocumented keeps docs/providers.md's table of answers
// complete: every error code ingest can answer appears there, in a row with
// its status.
func TestEveryAnswerIsDocumented(t *testing.T) {
	doc, err := os.ReadFile("../../docs/providers.md")
	if err != nil {
		t.Fatal(err)
	}
	rows := map[string]string{}
	for line := range strings.SplitSeq(string(doc), "\n") {
		if !strings.HasPrefix(line, "| ") {
			continue
		}
		for code := range answers {
			if strings.Contains(line, "`"+code+"`") {
				rows[code] = line
			}
		}
	}
	for code, a := range answers {
		row, ok := rows[code]
		switch {
		case !ok:
			t.Errorf("docs/providers.md has no row for the answer `%s` (%d): add it to the table of answers", code, a.status)
		case !strings.HasPrefix(row, "| "+strconv.Itoa(a.status)+" |"):
			t.Errorf("docs/providers.md gives `%s` another status than %d: %s", code, a.status, row)
		}
	}
}
