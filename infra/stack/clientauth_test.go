package stack_test

import (
	"encoding/json"
	"slices"
	"strings"
	"testing"

	"github.com/hookfan/hookfan/shared/delivery"
)

// clientAuthDests are TestClientAuthSecrets's lanes: a bank presenting a
// client certificate and an OAuth 2.0 token, a lane without either, and
// one trusting a private CA.
var clientAuthDests = []string{
	`{"name": "bank", "url": "https://in.bank.example/webhooks",
	  "headers": [{"name": "X-Api-Key", "secretName": "hookfan/bank/oauth"}],
	  "tls": {"clientCertificateSecret": "hookfan/bank/client-cert", "caSecret": "hookfan/bank/ca"},
	  "auth": {"oauth2": {"tokenUrl": "https://idp.bank.example/token", "clientSecret": "hookfan/bank/oauth", "scopes": ["webhooks"]}}}`,
	`{"name": "no-auth", "url": "https://plain.example/in"}`,
	`{"name": "private", "url": "https://in.corp.example/in", "tls": {"caSecret": "hookfan/private/ca"}}`,
}

// TestClientAuthSecrets: a lane whose destination presents a client
// certificate and an OAuth 2.0 token may read exactly those secrets (and
// its signing secret), each by name; the lane beside it reads none of them;
// the function's environment carries their names, never a value. A lane
// that trusts a private CA without a client certificate reads the CA's
// secret alone. Its lanes are clientAuthDests, in lanesConfig.
func TestClientAuthSecrets(t *testing.T) {
	cfg := lanesConfig(t)
	h, _ := synth(t, cfg)
	want := map[string][]string{
		"bank":    {"hookfan/bank/ca", "hookfan/bank/client-cert", "hookfan/bank/oauth"},
		"no-auth": nil,
		"private": {"hookfan/private/ca"},
	}
	for _, name := range namesOf(t, clientAuthDests) {
		i := laneIndex(t, cfg, name)
		d := cfg.Destinations[i]
		_, res := templateOf(t, h.LaneStacks[i])
		checkLane(t, d, cfg, res, false)
		var read []string
		for _, pol := range ofType(res, "AWS::IAM::Policy") {
			for _, st := range statements(pol.Properties["PolicyDocument"]) {
				if !slices.Contains(anyStrings(st["Action"]), "secretsmanager:GetSecretValue") {
					continue
				}
				r, _ := json.Marshal(st["Resource"])
				if strings.Contains(string(r), "secret:-??????") {
					t.Errorf("%s reads a secret with no name: %s", d.Name, r)
				}
				for _, name := range []string{"hookfan/bank/ca", "hookfan/bank/client-cert", "hookfan/bank/oauth", "hookfan/private/ca"} {
					if strings.Contains(string(r), "secret:"+name+"-??????") && !slices.Contains(read, name) {
						read = append(read, name)
					}
				}
			}
		}
		slices.Sort(read)
		if !slices.Equal(read, want[d.Name]) {
			t.Errorf("%s reads %v, want %v", d.Name, read, want[d.Name])
		}
		if got := len(h.Lanes[i].ClientAuthSecrets); got != len(want[d.Name]) {
			t.Errorf("%s: %d client auth secrets, want %d", d.Name, got, len(want[d.Name]))
		}
	}
	env := h.Lanes[laneIndex(t, cfg, "bank")].Env.Render()[delivery.EnvDestination]
	for _, s := range []string{`"clientCertificateSecret":"hookfan/bank/client-cert"`, `"tokenUrl":"https://idp.bank.example/token"`} {
		if !strings.Contains(env, s) {
			t.Errorf("the function's destination lacks %s: %s", s, env)
		}
	}
}
