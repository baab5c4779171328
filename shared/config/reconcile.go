package config

import (
	"net"
	"net/url"
	"strings"
	"time"

	"github.com/hookfan/hookfan/shared/provider"
)

// Reconciliation's bounds and defaults (shared/reconcile runs it).
const (
	// DefaultReconcileEvery is how often a source is reconciled when its
	// block sets no every.
	DefaultReconcileEvery = 15 * time.Minute
	// MinReconcileEvery and MaxReconcileEvery bound every: EventBridge
	// Scheduler's rate is whole minutes, and a day keeps a run within
	// GitHub's three days of deliveries twice over.
	MinReconcileEvery = time.Minute
	MaxReconcileEvery = 24 * time.Hour
	// DefaultReconcileLookback is the lookback of a block that sets none:
	// GitHub's retention, and three days of Stripe's retries.
	DefaultReconcileLookback = 72 * time.Hour
	// StripeRetention, GitHubRetention and GitHubServerRetention are how
	// far back each provider's API lists what it sent: Stripe's events 30
	// days, GitHub.com's hook deliveries 3 days, GitHub Enterprise
	// Server's 7.
	StripeRetention       = 30 * 24 * time.Hour
	GitHubRetention       = 3 * 24 * time.Hour
	GitHubServerRetention = 7 * 24 * time.Hour
	// DefaultStripeAPI and DefaultGitHubAPI are the APIs' base URLs when
	// apiUrl is not set.
	DefaultStripeAPI = "https://api.stripe.com"
	DefaultGitHubAPI = "https://api.github.com"
)

// Reconcile is a source's reconciliation with its provider: every Every,
// the provider's API is asked what it sent over the last Lookback, and
// what never reached Hookfan is brought in (Stripe: published as ingest
// would have, marked reconciled) or redelivered (GitHub: through GitHub's
// own redelivery, signed, through ingest). Only the kinds whose provider
// lists what it sent take the block (stripe, github).
type Reconcile struct {
	// Every is how often a scheduled run goes (default 15m; whole
	// minutes, 1m to 24h).
	Every Duration `json:"every,omitempty"`
	// Lookback is how far back a run may bring an event in (default 72h;
	// at most the provider's retention: Stripe 30 days, GitHub 3 days,
	// GitHub Enterprise Server 7). An event older than that is reported,
	// never brought in.
	Lookback Duration `json:"lookback,omitempty"`
	// SecretName is the Secrets Manager secret holding the API credential:
	// a Stripe restricted key that reads events, or a GitHub token that
	// reads and redelivers the hook's deliveries.
	SecretName string `json:"secretName"`
	// Hook is the GitHub webhook whose deliveries are listed (github
	// only, required there).
	Hook *GitHubHook `json:"hook,omitempty"`
	// APIURL is the API's base URL: GitHub Enterprise Server's
	// (https://HOST/api/v3), or a local fake's. Default the provider's
	// public API. https, or http to a loopback address.
	APIURL string `json:"apiUrl,omitempty"`
}

// GitHubHook names a GitHub webhook: a repository's (Owner and Repo), an
// organization's (Org), or a GitHub App's (App), with its ID but for an
// App (which has one).
type GitHubHook struct {
	Owner string `json:"owner,omitempty"`
	Repo  string `json:"repo,omitempty"`
	Org   string `json:"org,omitempty"`
	ID    int64  `json:"id,omitempty"`
	App   bool   `json:"app,omitempty"`
}

// Interval is how often a scheduled run goes.
func (r Reconcile) Interval() time.Duration {
	if r.Every == 0 {
		return DefaultReconcileEvery
	}
	return r.Every.D()
}

// Window is how far back a run may bring an event in.
func (r Reconcile) Window() time.Duration {
	if r.Lookback == 0 {
		return DefaultReconcileLookback
	}
	return r.Lookback.D()
}

// API is the base URL of the provider's API for kind, without a trailing
// slash.
func (r Reconcile) API(kind string) string {
	if r.APIURL != "" {
		return strings.TrimRight(r.APIURL, "/")
	}
	if kind == provider.GitHub {
		return DefaultGitHubAPI
	}
	return DefaultStripeAPI
}

// Retention is how far back the provider's API lists what it sent, for a
// source of kind: GitHub Enterprise Server's when apiUrl names another
// host than api.github.com; 0 for a kind with no such API.
func (r Reconcile) Retention(kind string) time.Duration {
	switch kind {
	case provider.Stripe:
		return StripeRetention
	case provider.GitHub:
		if r.APIURL != "" && !strings.EqualFold(hostOf(r.APIURL), "api.github.com") {
			return GitHubServerRetention
		}
		return GitHubRetention
	}
	return 0
}

// Reconciled lists the sources that have a reconcile block.
func (c *Config) Reconciled() []Source {
	var out []Source
	for _, s := range c.Sources {
		if s.Reconcile != nil {
			out = append(out, s)
		}
	}
	return out
}

func hostOf(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return ""
	}
	return u.Hostname()
}

// noListing says, per kind without an API that lists what it sent, what
// to do instead of reconciling.
var noListing = map[string]string{
	provider.Shopify:          "Shopify's Admin API lists orders, products and the like, not the webhooks it sent: reconcile those resources in the service that needs them (updated_at_min), and watch Hookfan's IngestRejected alarm",
	provider.Slack:            "Slack lists no events it sent: rely on Slack's own retries (three, over an hour) and watch Hookfan's IngestRejected alarm",
	provider.StandardWebhooks: "the Standard Webhooks specification defines no API to list sent messages: use the sender's own (Svix's GET /api/v1/app/{app}/msg/, for one) from a job of yours, or its dashboard's recover button, and watch Hookfan's IngestRejected alarm",
	provider.HMAC:             "a generic HMAC sender has no API Hookfan knows: use the sender's resend feature if it has one, and watch Hookfan's IngestRejected alarm",
	provider.Token:            "a token sender has no API Hookfan knows: use the sender's resend feature if it has one, and watch Hookfan's IngestRejected alarm",
}

func (r *Reconcile) validate(p *problems, at, kind string, known bool) {
	if !known {
		return // verify.kind is already reported
	}
	if why, ok := noListing[kind]; ok {
		p.add(at, "kind %q has no API that lists the events it sent, so it cannot be reconciled; remove the block: %s", kind, why)
		return
	}
	every := r.Interval()
	switch {
	case every < MinReconcileEvery || every > MaxReconcileEvery:
		p.add(at+".every", "%q is out of range; use %s to %s (default %s)", r.Every.D(), "1m", "24h", "15m")
	case every%time.Minute != 0:
		p.add(at+".every", "%q is not whole minutes, which the schedule's rate needs; use e.g. %q", r.Every.D(), (every.Round(time.Minute)).String())
	}
	retention, lookback := r.Retention(kind), r.Window()
	switch {
	case lookback <= 0:
		p.add(at+".lookback", "%q is not positive; use up to %s (the provider's retention), default 72h", r.Lookback.D(), retention)
	case lookback > retention:
		p.add(at+".lookback", "%q is past what %s keeps (%s); use at most %s", r.Lookback.D(), retentionName(kind, retention), retention, retention)
	case lookback < every:
		p.add(at+".lookback", "%q is shorter than every (%s), so events between two runs would never be looked at; use at least %s", r.Lookback.D(), every, every)
	}
	if r.SecretName == "" {
		p.add(at+".secretName", "missing; name the Secrets Manager secret that holds the API credential (%s)", credentialName(kind))
	} else {
		validSecretName(p, at+".secretName", r.SecretName)
	}
	if r.APIURL != "" {
		validAPIURL(p, at+".apiUrl", r.APIURL)
	}
	switch {
	case kind == provider.GitHub && r.Hook == nil:
		p.add(at+".hook", `missing; name the webhook whose deliveries are listed: {"owner": "o", "repo": "r", "id": N}, {"org": "o", "id": N} or {"app": true}`)
	case kind == provider.GitHub:
		r.Hook.validate(p, at+".hook")
	case r.Hook != nil:
		p.add(at+".hook", "set for kind %q; remove it (it applies to github only)", kind)
	}
}

func retentionName(kind string, retention time.Duration) string {
	switch {
	case kind == provider.Stripe:
		return "Stripe's events API"
	case retention == GitHubServerRetention:
		return "GitHub Enterprise Server's hook deliveries (apiUrl names a server)"
	}
	return "GitHub's hook deliveries"
}

func credentialName(kind string) string {
	if kind == provider.Stripe {
		return "a restricted key with Events: Read, rk_live_…"
	}
	return "a token that may read and redeliver the hook's deliveries"
}

func (h *GitHubHook) validate(p *problems, at string) {
	repo, org := h.Owner != "" || h.Repo != "", h.Org != ""
	n := 0
	for _, set := range []bool{repo, org, h.App} {
		if set {
			n++
		}
	}
	switch {
	case n == 0:
		p.add(at, `names no webhook; use {"owner": "o", "repo": "r", "id": N}, {"org": "o", "id": N} or {"app": true}`)
		return
	case n > 1:
		p.add(at, "names more than one kind of webhook (owner/repo, org, app); keep one")
		return
	}
	switch {
	case repo && (h.Owner == "" || h.Repo == ""):
		p.add(at, "owner %q and repo %q: a repository's webhook needs both", h.Owner, h.Repo)
	case repo && (!isGitHubName(h.Owner) || !isGitHubName(h.Repo)):
		p.add(at, "owner %q or repo %q is not a GitHub name; use letters, digits, '-', '_' and '.'", h.Owner, h.Repo)
	case org && !isGitHubName(h.Org):
		p.add(at+".org", "%q is not a GitHub organization name; use letters, digits and '-'", h.Org)
	}
	switch {
	case h.App && h.ID != 0:
		p.add(at+".id", "%d set with app; remove it (a GitHub App has one webhook)", h.ID)
	case !h.App && h.ID <= 0:
		p.add(at+".id", "%d is not a webhook id; use the hook's id (Settings → Webhooks, the number in the hook's URL)", h.ID)
	}
}

func isGitHubName(s string) bool {
	if s == "" || len(s) > 100 || s == "." || s == ".." {
		return false
	}
	return all(s, func(c byte) bool { return lower(c) || upper(c) || digit(c) || c == '-' || c == '_' || c == '.' })
}

func validAPIURL(p *problems, at, raw string) {
	u, err := url.Parse(raw)
	switch {
	case err != nil || u.Host == "" || u.Opaque != "":
		p.add(at, "%q is not an absolute URL; use e.g. https://github.example.com/api/v3", raw)
	case u.User != nil || u.RawQuery != "" || u.Fragment != "":
		p.add(at, "%q carries credentials, a query or a fragment; give the base URL only (the credential is in secretName)", raw)
	case u.Scheme == "https":
	case u.Scheme == "http" && isLoopbackHost(u.Hostname()):
	default:
		p.add(at, "%q is not https; use https (http only to a loopback address, for local fakes)", raw)
	}
}

func isLoopbackHost(h string) bool {
	if h == "localhost" {
		return true
	}
	ip := net.ParseIP(h)
	return ip != nil && ip.IsLoopback()
}
