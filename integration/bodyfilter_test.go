//go:build integration

package integration

import (
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/events"
	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/bodyfilter/cases"
	"github.com/hookfan/hookfan/shared/config"
)

// TestBodyFilterOperators runs every operator case (SNS's documented rules,
// arrays under each operator) through the local stack: one destination per
// case with the case's policy as its only filter, every body published as a
// GitHub event. Ingest must accept every one (moto 5.2.1 fails a Publish
// with a 500 when a MessageBody prefix policy meets an array, and ingest
// would answer 503), and each destination must receive exactly the events
// the documentation says its policy matches.
//
// Each case's policy and bodies sit under a key of their own ("c3": …), so a
// body of one case holds none of another case's keys and matches its policy
// exactly when the case's Absent says so. The empty body {} is sent once, at
// the top level: it matches no filter.
func TestBodyFilterOperators(t *testing.T) {
	t.Parallel()
	key := func(i int) string { return fmt.Sprintf("c%d", i) }
	rcs := map[string]*receiver{}
	var dests []string
	for i, c := range cases.Operators {
		name := fmt.Sprintf("op-%02d", i)
		rcs[name] = newReceiver(t, nil)
		dests = append(dests, destJSON(name, rcs[name], fmt.Sprintf(`"filter": {"body": {%q: %s}}`, key(i), c.Policy)))
	}
	e := startEnv(t, dests, rcs)
	for _, d := range e.cfg.Destinations {
		if _, scope := devstack.EmulatorSubscriptionFilter(e.cfg, d); scope == config.ScopeBody {
			t.Fatalf("%s: the emulator got a MessageBody policy", d.Name)
		}
	}

	want := map[string][]string{}
	what := map[string]string{} // event id → case and body, for the failure message
	n := 0
	send := func(body string) string {
		n++
		ev := e.send("github", "github", "push", fmt.Sprintf("b0d1f17e-0000-4000-8000-%012d", n), func(s *events.Sample) { s.Body = []byte(body) })
		what[ev.id] = body
		return ev.id
	}
	for i, c := range cases.Operators {
		for _, b := range c.Bodies {
			if b.Body == `{}` {
				continue
			}
			id := send(fmt.Sprintf(`{%q: %s}`, key(i), b.Body))
			for j, other := range cases.Operators {
				if match := other.Absent; j == i && b.Match || j != i && match {
					name := fmt.Sprintf("op-%02d", j)
					want[name] = append(want[name], id)
				}
			}
		}
	}
	send(`{}`)

	total := 0
	for _, ids := range want {
		total += len(ids)
	}
	waitFor(t, filterWait(t), fmt.Sprintf("%d filtered deliveries", total), func() bool {
		got := 0
		for _, rc := range rcs {
			got += len(rc.ids())
		}
		return got >= total
	})
	e.settled()
	for i, c := range cases.Operators {
		name := fmt.Sprintf("op-%02d", i)
		got := rcs[name].ids()
		slices.Sort(got)
		exp := slices.Clone(want[name])
		slices.Sort(exp)
		if diff := cmp.Diff(exp, got); diff != "" {
			describe := func(ids []string) []string {
				out := make([]string, len(ids))
				for k, id := range ids {
					out[k] = what[id]
				}
				return out
			}
			t.Errorf("%s (%s, %s) received (-want +got):\n%s\nwanted bodies %v\ngot bodies %v", name, c.Operator, c.Policy, diff, describe(exp), describe(got))
		}
	}
}

// filterWait is how long the test waits for its deliveries: most of what
// is left of the test's deadline (every event crosses one lane per case on an
// emulator that may be slow), or ten minutes without one.
func filterWait(t *testing.T) time.Duration {
	d, ok := t.Deadline()
	if !ok {
		return 10 * time.Minute
	}
	return max(time.Until(d)*3/4, time.Minute)
}
