package operator

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/ingest"
)

// TestStatusFindsAnEventByTheIDTheOperatorKnows: status takes a Hookfan
// event id, source:provider-id, or the provider's id alone (tried under
// each source), says which event it resolved to, fails for an id nothing
// holds, and lists the sources when several have the id.
func TestStatusFindsAnEventByTheIDTheOperatorKnows(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	outage := ingest.EventID("stripe", "evt_outage_1")
	queued := ingest.EventID("stripe", "evt_in_dlq_only")
	tests := []struct {
		arg      string
		wantID   string
		resolved string // the line saying what it resolved to, "" for none
		wantErr  string // "" for none
		noSuch   bool
	}{
		{arg: "evt_outage_1", wantID: outage, resolved: "resolved to stripe:evt_outage_1\nevent " + outage + "\n"},
		{arg: "stripe:evt_outage_1", wantID: outage},
		{arg: outage, wantID: outage},
		{arg: "evt_in_dlq_only", wantErr: `no destination has a record of evt_in_dlq_only nor holds it in its DLQ`, noSuch: true},
		{arg: "stripe:evt_in_dlq_only", wantID: queued},
		{arg: "evt_never_sent", wantErr: `no destination has a record of evt_never_sent nor holds it in its DLQ`, noSuch: true},
		{arg: "github:never-sent", wantErr: "no destination has a record of github:never-sent (" + ingest.EventID("github", "never-sent") + ") nor holds it in its DLQ", noSuch: true},
		{arg: "72d3162e-cc78-11e3-81ab-4c9367dc0958", wantErr: `no destination has a record of "72d3162e-cc78-11e3-81ab-4c9367dc0958" as a Hookfan event id or as the event id of any source (github, stripe): check the id, or give it as source:provider-event-id`, noSuch: true},
		{arg: "1234", wantErr: `"1234" is an event of several sources: github:1234 (` + ingest.EventID("github", "1234") + `), stripe:1234 (` + ingest.EventID("stripe", "1234") + `); give the one you mean as source:1234`},
		{arg: "a b", wantErr: `"a b" is not an event id`},
	}
	for _, tt := range tests {
		t.Run(tt.arg, func(t *testing.T) {
			q := newFakeQueues(c.now)
			op, out := testOperator(q, c)
			op.Resources.Sources = []string{"github", "stripe"}
			store := dedupe.NewMemory()
			op.Records = store
			ctx := context.Background()
			for _, id := range []string{outage, ingest.EventID("github", "1234"), ingest.EventID("stripe", "1234")} {
				if _, err := store.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("d", id), Source: "stripe", Type: "charge.failed",
					Now: c.t, LeaseUntil: c.t.Add(time.Minute), ExpiresAt: c.t.Add(time.Hour)}); err != nil {
					t.Fatal(err)
				}
			}
			q.add("dlq", queued)

			st, err := op.Status(ctx, tt.arg)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("error %v, want one containing %q", err, tt.wantErr)
				}
				if errors.Is(err, ErrNoSuchEvent) != tt.noSuch {
					t.Errorf("error %v: ErrNoSuchEvent %v, want %v", err, errors.Is(err, ErrNoSuchEvent), tt.noSuch)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if st.ID != tt.wantID {
				t.Errorf("resolved to %s, want %s", st.ID, tt.wantID)
			}
			if tt.resolved != "" && !strings.HasPrefix(out.String(), tt.resolved) {
				t.Errorf("output does not start with %q:\n%s", tt.resolved, out)
			}
			if tt.resolved == "" && strings.Contains(out.String(), "resolved to") {
				t.Errorf("output says it resolved a qualified or Hookfan id:\n%s", out)
			}
		})
	}
}

// TestStatusShowsTheReceiversAnswer: status prints each failed attempt's
// answer, quoted with control characters escaped, and a binary one as hex.
func TestStatusShowsTheReceiversAnswer(t *testing.T) {
	c := &clock{t: time.Date(2026, 5, 1, 0, 0, 0, 0, time.UTC)}
	op, out := testOperator(newFakeQueues(c.now), c)
	store := dedupe.NewMemory()
	op.Records = store
	ctx := context.Background()
	id := ingest.EventID("stripe", "evt_1")
	for i, answer := range [][]byte{[]byte("{\"error\":\"bad\"}\x1b[2J"), {0xff, 0x00}} {
		at := c.t.Add(time.Duration(i) * time.Hour)
		l, err := store.Claim(ctx, dedupe.ClaimInput{PK: dedupe.Key("d", id), Source: "stripe", Type: "x", Now: at, LeaseUntil: at.Add(time.Minute), ExpiresAt: at.Add(48 * time.Hour)})
		if err != nil {
			t.Fatal(err)
		}
		if err := store.Finish(ctx, l, dedupe.Outcome{Status: dedupe.StatusFailed, HTTPStatus: 400, At: at, Answer: answer}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := op.Status(ctx, "stripe:evt_1"); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`answered "{\"error\":\"bad\"}\x1b[2J"`, "answered 2 bytes, not text: ff00"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("status lacks %s:\n%s", want, out)
		}
	}
	if strings.Contains(out.String(), "\x1b") {
		t.Errorf("status prints the escape character raw:\n%q", out)
	}
}
