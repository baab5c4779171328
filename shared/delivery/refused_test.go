package delivery

import (
	"context"
	"github.com/hookfan/hookfan/shared/delivery/sender/https"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/metrics"
)

// withGuard puts the destination behind the address guard (the harness's
// allows private networks) with allowCidrs, and builds its client so.
func withGuard(allow ...string) func(*laneOptions) {
	return func(o *laneOptions) {
		o.Destination.AllowPrivateNetworks, o.Destination.AllowCIDRs = false, allow
		o.Client = https.NewClient(o.Destination)
	}
}

// TestRefusedAddressIsAFailedAttempt: a URL read from its secret whose host
// the address guard refuses (private, outside allowCidrs, never
// reachable) is no silent back-off: the attempt is claimed and recorded
// FAILED with the reason address_refused and the host's class (never the
// URL's path or query), counted as a failed attempt on the retry
// schedule, and DEAD at the last attempt. Nothing is sent.
func TestRefusedAddressIsAFailedAttempt(t *testing.T) {
	tests := []struct {
		name, url string
		allow     []string
		attempt   int
		want      string
		status    dedupe.Status
		vis       []int32
		dead      float64
	}{
		{name: "private", url: "https://10.1.2.3/hooks/tok_do-not-log?k=do-not-log", attempt: 1,
			want:   `address_refused: the URL in secret "u": host 10.1.2.3 is a private-use address`,
			status: dedupe.StatusFailed, vis: []int32{5}},
		{name: "outside allowCidrs", url: "https://10.30.0.1/hooks/tok_do-not-log", allow: []string{"10.20.0.0/16"}, attempt: 2,
			want:   `address_refused: the URL in secret "u": host 10.30.0.1 is a private-use address, in none of the destination's allowCidrs`,
			status: dedupe.StatusFailed, vis: []int32{30}},
		{name: "metadata service, listed or not", url: "https://169.254.169.254/latest/do-not-log", allow: []string{"10.20.0.0/16"}, attempt: 1,
			want:   `address_refused: the URL in secret "u": host 169.254.169.254 is a link-local address (the instance metadata service lives there), never reachable whatever allowCidrs lists`,
			status: dedupe.StatusFailed, vis: []int32{5}},
		{name: "loopback name", url: "https://localhost/do-not-log", attempt: 1,
			want:   `address_refused: the URL in secret "u": host "localhost" is a loopback name`,
			status: dedupe.StatusFailed, vis: []int32{5}},
		{name: "last attempt", url: "https://10.1.2.3/hooks/tok_do-not-log", attempt: 10,
			want:   `address_refused: the URL in secret "u": host 10.1.2.3 is a private-use address`,
			status: dedupe.StatusDead, vis: []int32{0}, dead: 1},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			secret := newSecret(t)
			hs := &fakeHeaderSecrets{values: map[string]string{"u": tt.url}}
			h := newHarness(t, "", secret, withURLSecret(hs, "u"), withGuard(tt.allow...))
			resp, _ := h.h.Handle(context.Background(), batch(sqsRecord("evt_r", tt.attempt)))
			if f := failures(resp); len(f) != 1 {
				t.Fatalf("failures %v, want the record released", f)
			}
			r, ok, err := h.store.Get(context.Background(), dedupe.Key("orders", "evt_r"))
			if err != nil || !ok {
				t.Fatalf("no delivery record: %v", err)
			}
			if r.Status != tt.status || r.LastError != tt.want || r.Attempts != 1 || r.LastStatus != 0 {
				t.Errorf("record %s after %d attempts, status %d: %q; want %s after 1: %q", r.Status, r.Attempts, r.LastStatus, r.LastError, tt.status, tt.want)
			}
			if diff := cmp.Diff(tt.vis, h.sqs.visibility()["rh-evt_r"]); diff != "" {
				t.Errorf("visibility (-want +got):\n%s", diff)
			}
			for name, want := range map[string]float64{metrics.DeliveryAttempts: 1, metrics.DeliveryFailed: 1, metrics.DeliveryDead: tt.dead} {
				if got := h.sink.sum(name); got != want {
					t.Errorf("%s = %g, want %g", name, got, want)
				}
			}
			logs := h.logs.b.String()
			if strings.Contains(logs, "not_attempted") || !strings.Contains(logs, "address_refused") {
				t.Errorf("log, want the attempt's line with its reason: %s", logs)
			}
			if strings.Contains(logs+r.LastError, "do-not-log") {
				t.Errorf("the URL's path or query reached the log or the record: %s %s", logs, r.LastError)
			}
		})
	}
}

// TestRefusedAtConnectTime: a URL whose resolved address the guard refuses
// when it connects gets the same reason in its record.
func TestRefusedAtConnectTime(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	h := newHarness(t, sub.URL, secret, withGuard("10.20.0.0/16"))
	h.h.Handle(context.Background(), batch(sqsRecord("evt_c", 1)))
	r := lastRecord(t, h, "evt_c")
	want := "address_refused: 127.0.0.1 is a loopback address, in none of the destination's allowCidrs"
	if r.Status != dedupe.StatusFailed || r.LastError != want || r.Attempts != 1 {
		t.Errorf("record %s after %d attempts: %q; want FAILED after 1: %q", r.Status, r.Attempts, r.LastError, want)
	}
	if n := len(sub.requests()); n != 0 {
		t.Errorf("%d requests reached the subscriber", n)
	}
}

// TestPortNotOpenIsAFailedAttempt: on a static lane, a URL read from its
// secret on a port the lane's security group does not open is refused
// before connecting (it would only time out against the group), recorded
// as port_not_open (TestEgressPorts in shared/config: the ports open, the
// token endpoint's among them). On the public path any port is sent to.
func TestPortNotOpenIsAFailedAttempt(t *testing.T) {
	secret := newSecret(t)
	sub := newSubscriber(t, secret, nil)
	port := sub.URL[strings.LastIndexByte(sub.URL, ':')+1:]
	static := func(o *laneOptions) { o.Destination.Egress = config.EgressStatic }
	hs := &fakeHeaderSecrets{values: map[string]string{"u": sub.URL + "/hooks/tok_do-not-log"}}

	h := newHarness(t, "", secret, withURLSecret(hs, "u"), static)
	h.h.Handle(context.Background(), batch(sqsRecord("evt_p", 1)))
	r := lastRecord(t, h, "evt_p")
	want := `port_not_open: the URL in secret "u": the URL's port ` + port + ` is not open in the static lane's security group, which lets out TCP 443 only (443, and the ports of url and auth.oauth2.tokenUrl); store a URL on one of them`
	if r.Status != dedupe.StatusFailed || r.LastError != want || r.Attempts != 1 {
		t.Errorf("record %s after %d attempts: %q; want FAILED after 1: %q", r.Status, r.Attempts, r.LastError, want)
	}
	if h.sink.sum(metrics.DeliveryFailed) != 1 {
		t.Errorf("DeliveryFailed = %g, want 1", h.sink.sum(metrics.DeliveryFailed))
	}
	if n := len(sub.requests()); n != 0 {
		t.Fatalf("%d requests reached the subscriber through a closed port", n)
	}

	h = newHarness(t, "", secret, withURLSecret(hs, "u"))
	h.h.Handle(context.Background(), batch(sqsRecord("evt_s", 1)))
	if r := lastRecord(t, h, "evt_s"); r.Status != dedupe.StatusDelivered {
		t.Errorf("public path: record %s %q, want DELIVERED", r.Status, r.LastError)
	}
}
