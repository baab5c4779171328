package operator

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// TestCommandLinesRecordTheirActions: every command line that changes the
// stack is an action for the log the console shows, with its command line
// as its detail; a dry run, and a command that only reads, is none.
func TestCommandLinesRecordTheirActions(t *testing.T) {
	tests := []struct {
		line     []string
		recorded bool
		dest     string
	}{
		{[]string{"pause", "orders", "--reason", "receiver down"}, true, "orders"},
		{[]string{"resume", "orders"}, true, "orders"},
		{[]string{"pace", "orders", "--per-second", "1", "--for", "2h"}, true, "orders"},
		{[]string{"redrive", "orders"}, true, "orders"},
		{[]string{"replay", "--destination", "orders", "--since", "1h"}, true, "orders"},
		{[]string{"replay", "--destination", "orders", "--since", "1h", "--dry-run"}, false, ""},
		{[]string{"reconcile", "stripe", "--since", "24h"}, true, ""},
		{[]string{"reconcile", "stripe", "--dry-run"}, false, ""},
		{[]string{"status", "evt_1"}, false, ""},
		{[]string{"lanes"}, false, ""},
		{[]string{"dlq", "orders"}, false, ""},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.line, " "), func(t *testing.T) {
			c := commands[tt.line[0]](tt.line[0])
			positional, err := parseInterleaved(c.flags, tt.line[1:])
			if err != nil {
				t.Fatal(err)
			}
			a, ok := commandAction(tt.line[0], c.flags, positional, tt.line[1:])
			if ok != tt.recorded {
				t.Fatalf("recorded %v, want %v", ok, tt.recorded)
			}
			if !ok {
				return
			}
			if a.Kind != tt.line[0] || a.Destination != tt.dest || a.Detail != "ops "+strings.Join(tt.line, " ") {
				t.Errorf("action %+v; want kind %s, destination %q and the command line", a, tt.line[0], tt.dest)
			}
		})
	}
}

// failingLog is an action log that cannot be written.
type failingLog struct{ MemoryActions }

func (*failingLog) Record(context.Context, Action) error { return errors.New("AccessDeniedException") }

// TestRecordAction: an action is recorded under the operator's identity
// and time, done or failed with its error; an identity that cannot be
// read, or a log that cannot be written, is said on stderr and the action
// stands.
func TestRecordAction(t *testing.T) {
	at := time.Date(2026, 12, 3, 16, 0, 0, 0, time.UTC)
	log := &MemoryActions{}
	op := &Operator{Actions: log, Now: func() time.Time { return at },
		Identity: func(context.Context) (string, error) { return "arn:aws:sts::123456789012:assumed-role/ops/alice", nil }}
	var stderr bytes.Buffer
	op.recordAction(context.Background(), Action{Kind: "pause", Destination: "orders", Detail: "ops pause orders"}, nil, &stderr)
	op.recordAction(context.Background(), Action{Kind: "resume", Destination: "orders", Detail: "ops resume orders"}, errors.New("lane orders is not paused"), &stderr)
	got, _ := log.Since(context.Background(), at.Add(-time.Minute))
	if len(got) != 2 {
		t.Fatalf("%d actions recorded, want 2", len(got))
	}
	if a := got[1]; a.Identity != "arn:aws:sts::123456789012:assumed-role/ops/alice" || !a.At.Equal(at) || a.Failed || !strings.Contains(a.Result, "command line") {
		t.Errorf("the pause recorded as %+v", a)
	}
	if a := got[0]; !a.Failed || a.Result != "lane orders is not paused" {
		t.Errorf("the failed resume recorded as %+v", a)
	}
	if stderr.Len() != 0 {
		t.Errorf("stderr %q, want nothing", stderr.String())
	}

	op.Identity = func(context.Context) (string, error) {
		return "", errors.New("who am I (STS GetCallerIdentity): expired token")
	}
	op.recordAction(context.Background(), Action{Kind: "redrive", Destination: "orders"}, nil, &stderr)
	if got, _ := log.Since(context.Background(), at.Add(-time.Minute)); got[0].Identity != "unknown" || !strings.Contains(stderr.String(), "expired token") {
		t.Errorf("recorded %+v, stderr %q; want the action under an unknown identity, and why said", got[0], stderr.String())
	}
	stderr.Reset()
	op.Actions = &failingLog{}
	op.recordAction(context.Background(), Action{Kind: "redrive", Destination: "orders"}, nil, &stderr)
	if !strings.Contains(stderr.String(), "could not be recorded") {
		t.Errorf("stderr %q; want the unwritten log said", stderr.String())
	}
}
