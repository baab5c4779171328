package config

import (
	"strings"
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
)

// reconciled is a configuration with one source of kind and its
// reconcile block.
func reconciled(kind, block string) string {
	return `{"sources": [{"name": "src", "verify": {"kind": "` + kind + `", "secretName": "hookfan/sources/src"}, "reconcile": ` + block + `}],
	"destinations": [{"name": "orders", "url": "https://orders.example.com/hooks"}]}`
}

func TestReconcileValid(t *testing.T) {
	tests := []struct {
		name, kind, block string
		every, lookback   time.Duration
		api               string
		retention         time.Duration
	}{
		{"stripe defaults", "stripe", `{"secretName": "hookfan/reconcile/stripe"}`, 15 * time.Minute, 72 * time.Hour, DefaultStripeAPI, StripeRetention},
		{"stripe 30 days", "stripe", `{"every": "1h", "lookback": "720h", "secretName": "s"}`, time.Hour, 720 * time.Hour, DefaultStripeAPI, StripeRetention},
		{"github repo", "github", `{"secretName": "s", "hook": {"owner": "acme", "repo": "shop.web", "id": 12}}`, 15 * time.Minute, 72 * time.Hour, DefaultGitHubAPI, GitHubRetention},
		{"github org", "github", `{"every": "5m", "lookback": "24h", "secretName": "s", "hook": {"org": "acme", "id": 7}}`, 5 * time.Minute, 24 * time.Hour, DefaultGitHubAPI, GitHubRetention},
		{"github app", "github", `{"secretName": "s", "hook": {"app": true}}`, 15 * time.Minute, 72 * time.Hour, DefaultGitHubAPI, GitHubRetention},
		{"github enterprise server", "github", `{"lookback": "168h", "secretName": "s", "hook": {"org": "acme", "id": 7}, "apiUrl": "https://ghe.example.com/api/v3/"}`, 15 * time.Minute, 168 * time.Hour, "https://ghe.example.com/api/v3", GitHubServerRetention},
		{"local fake", "stripe", `{"secretName": "s", "apiUrl": "http://127.0.0.1:9000"}`, 15 * time.Minute, 72 * time.Hour, "http://127.0.0.1:9000", StripeRetention},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c, err := Parse([]byte(reconciled(tt.kind, tt.block)))
			if err != nil {
				t.Fatal(err)
			}
			r := c.Sources[0].Reconcile
			if r.Interval() != tt.every || r.Window() != tt.lookback || r.API(tt.kind) != tt.api || r.Retention(tt.kind) != tt.retention {
				t.Errorf("every %s, lookback %s, api %s, retention %s; want %s, %s, %s, %s", r.Interval(), r.Window(), r.API(tt.kind), r.Retention(tt.kind), tt.every, tt.lookback, tt.api, tt.retention)
			}
			if got := c.Reconciled(); len(got) != 1 || got[0].Name != "src" {
				t.Errorf("Reconciled() = %v", got)
			}
			if got := IngestSources(c.Sources); got[0].Reconcile != nil {
				t.Error("ingest receives the reconcile block")
			}
		})
	}
}

func TestReconcileInvalid(t *testing.T) {
	tests := []struct {
		name, kind, block string
		want              []string
	}{
		{"shopify", "shopify", `{"secretName": "s"}`, []string{
			`sources[0].reconcile: kind "shopify" has no API that lists the events it sent, so it cannot be reconciled; remove the block: Shopify's Admin API lists orders, products and the like, not the webhooks it sent: reconcile those resources in the service that needs them (updated_at_min), and watch Hookfan's IngestRejected alarm`,
		}},
		{"slack", "slack", `{"secretName": "s"}`, []string{
			`sources[0].reconcile: kind "slack" has no API that lists the events it sent, so it cannot be reconciled; remove the block: Slack lists no events it sent: rely on Slack's own retries (three, over an hour) and watch Hookfan's IngestRejected alarm`,
		}},
		{"stripe lookback past retention", "stripe", `{"lookback": "721h", "secretName": "s"}`, []string{
			`sources[0].reconcile.lookback: "721h0m0s" is past what Stripe's events API keeps (720h0m0s); use at most 720h0m0s`,
		}},
		{"github lookback past retention", "github", `{"lookback": "96h", "secretName": "s", "hook": {"app": true}}`, []string{
			`sources[0].reconcile.lookback: "96h0m0s" is past what GitHub's hook deliveries keeps (72h0m0s); use at most 72h0m0s`,
		}},
		{"enterprise server lookback past retention", "github", `{"lookback": "200h", "secretName": "s", "hook": {"app": true}, "apiUrl": "https://ghe.example.com/api/v3"}`, []string{
			`sources[0].reconcile.lookback: "200h0m0s" is past what GitHub Enterprise Server's hook deliveries (apiUrl names a server) keeps (168h0m0s); use at most 168h0m0s`,
		}},
		{"lookback shorter than every", "stripe", `{"every": "2h", "lookback": "1h", "secretName": "s"}`, []string{
			`sources[0].reconcile.lookback: "1h0m0s" is shorter than every (2h0m0s), so events between two runs would never be looked at; use at least 2h0m0s`,
		}},
		{"negative lookback", "stripe", `{"lookback": "-1h", "secretName": "s"}`, []string{
			`sources[0].reconcile.lookback: "-1h0m0s" is not positive; use up to 720h0m0s (the provider's retention), default 72h`,
		}},
		{"every too often", "stripe", `{"every": "30s", "secretName": "s"}`, []string{
			`sources[0].reconcile.every: "30s" is out of range; use 1m to 24h (default 15m)`,
		}},
		{"every not whole minutes", "stripe", `{"every": "90s", "secretName": "s"}`, []string{
			`sources[0].reconcile.every: "1m30s" is not whole minutes, which the schedule's rate needs; use e.g. "2m0s"`,
		}},
		{"no secret", "stripe", `{}`, []string{
			`sources[0].reconcile.secretName: missing; name the Secrets Manager secret that holds the API credential (a restricted key with Events: Read, rk_live_…)`,
		}},
		{"hook on stripe", "stripe", `{"secretName": "s", "hook": {"app": true}}`, []string{
			`sources[0].reconcile.hook: set for kind "stripe"; remove it (it applies to github only)`,
		}},
		{"github without hook", "github", `{"secretName": "s"}`, []string{
			`sources[0].reconcile.hook: missing; name the webhook whose deliveries are listed: {"owner": "o", "repo": "r", "id": N}, {"org": "o", "id": N} or {"app": true}`,
		}},
		{"empty hook", "github", `{"secretName": "s", "hook": {"id": 3}}`, []string{
			`sources[0].reconcile.hook: names no webhook; use {"owner": "o", "repo": "r", "id": N}, {"org": "o", "id": N} or {"app": true}`,
		}},
		{"repo and org", "github", `{"secretName": "s", "hook": {"owner": "a", "repo": "b", "org": "c", "id": 3}}`, []string{
			`sources[0].reconcile.hook: names more than one kind of webhook (owner/repo, org, app); keep one`,
		}},
		{"owner without repo", "github", `{"secretName": "s", "hook": {"owner": "a", "id": 3}}`, []string{
			`sources[0].reconcile.hook: owner "a" and repo "": a repository's webhook needs both`,
		}},
		{"bad org", "github", `{"secretName": "s", "hook": {"org": "a/b", "id": 3}}`, []string{
			`sources[0].reconcile.hook.org: "a/b" is not a GitHub organization name; use letters, digits and '-'`,
		}},
		{"no id", "github", `{"secretName": "s", "hook": {"org": "acme"}}`, []string{
			`sources[0].reconcile.hook.id: 0 is not a webhook id; use the hook's id (Settings → Webhooks, the number in the hook's URL)`,
		}},
		{"app with id", "github", `{"secretName": "s", "hook": {"app": true, "id": 4}}`, []string{
			`sources[0].reconcile.hook.id: 4 set with app; remove it (a GitHub App has one webhook)`,
		}},
		{"http api", "stripe", `{"secretName": "s", "apiUrl": "http://stripe.example.com"}`, []string{
			`sources[0].reconcile.apiUrl: "http://stripe.example.com" is not https; use https (http only to a loopback address, for local fakes)`,
		}},
		{"api with credentials", "stripe", `{"secretName": "s", "apiUrl": "https://rk_live_x@api.stripe.com"}`, []string{
			`sources[0].reconcile.apiUrl: "https://rk_live_x@api.stripe.com" carries credentials, a query or a fragment; give the base URL only (the credential is in secretName)`,
		}},
		{"relative api", "stripe", `{"secretName": "s", "apiUrl": "api.stripe.com"}`, []string{
			`sources[0].reconcile.apiUrl: "api.stripe.com" is not an absolute URL; use e.g. https://github.example.com/api/v3`,
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(reconciled(tt.kind, tt.block)))
			if err == nil {
				t.Fatal("accepted")
			}
			if diff := cmp.Diff(tt.want, strings.Split(err.Error(), "\n")); diff != "" {
				t.Errorf("errors (-want +got):\n%s", diff)
			}
		})
	}
}

func TestReconcileUnknownField(t *testing.T) {
	_, err := Parse([]byte(reconciled("stripe", `{"secretName": "s", "lookbak": "1h"}`)))
	if err == nil || !strings.Contains(err.Error(), "sources[0].reconcile") || !strings.Contains(err.Error(), "lookback") {
		t.Fatalf("got %v; want the unknown field named with its path and the suggestion", err)
	}
}
