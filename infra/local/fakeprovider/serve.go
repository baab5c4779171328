package fakeprovider

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/provider"
)

// Served is one fake serving a reconciled source's API.
type Served struct {
	Source, Kind string
	URL          string // the fake's base URL (the source's apiUrl)
	Control      string // the fake's own endpoint that makes events
}

// Serve starts a fake for each reconciled source of cfg whose apiUrl is an
// http:// loopback address, on that address: a Stripe fake taking the
// source's reconcile secret as its key and sending to gateway's
// /webhooks/{source} signed with the source's secret, a GitHub fake for
// the source's hook likewise. secrets holds the values by name (the local
// stack's --secrets). The servers stop when ctx ends.
func Serve(ctx context.Context, cfg *config.Config, secrets map[string][]string, gateway string) ([]Served, error) {
	var out []Served
	for _, s := range cfg.Reconciled() {
		u, err := url.Parse(s.Reconcile.APIURL)
		if err != nil || u.Scheme != "http" || u.Host == "" {
			continue
		}
		if ip := net.ParseIP(u.Hostname()); ip == nil || !ip.IsLoopback() {
			continue
		}
		first := func(name string) string {
			if v := secrets[name]; len(v) > 0 {
				return v[0]
			}
			return ""
		}
		target := gateway + "/webhooks/" + s.Name
		var h http.Handler
		served := Served{Source: s.Name, Kind: s.Verify.Kind, URL: s.Reconcile.APIURL}
		switch s.Verify.Kind {
		case provider.Stripe:
			h = &Stripe{Key: first(s.Reconcile.SecretName), WebhookURL: target, WebhookSecret: first(s.Verify.SecretName)}
			served.Control = "http://" + u.Host + ControlStripeEvents
		case provider.GitHub:
			g := &GitHub{Token: first(s.Reconcile.SecretName), Path: HookPath(*s.Reconcile.Hook), Target: target}
			g.SetSecret(first(s.Verify.SecretName))
			h = g
			served.Control = "http://" + u.Host + ControlGitHubDeliveries
		default:
			continue
		}
		ln, err := net.Listen("tcp", u.Host)
		if err != nil {
			return out, fmt.Errorf("fake %s API for source %s: %w", s.Verify.Kind, s.Name, err)
		}
		srv := &http.Server{Handler: h, ReadHeaderTimeout: 10 * time.Second}
		go func() { _ = srv.Serve(ln) }()
		go func() {
			<-ctx.Done()
			shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
			defer cancel()
			if err := srv.Shutdown(shutdown); err != nil && !errors.Is(err, http.ErrServerClosed) {
				_ = srv.Close()
			}
		}()
		out = append(out, served)
	}
	return out, nil
}

// HookPath is the deliveries path of a configured hook.
func HookPath(h config.GitHubHook) string {
	switch {
	case h.App:
		return "/app/hook/deliveries"
	case h.Org != "":
		return "/orgs/" + h.Org + "/hooks/" + strconv.FormatInt(h.ID, 10) + "/deliveries"
	}
	return "/repos/" + h.Owner + "/" + h.Repo + "/hooks/" + strconv.FormatInt(h.ID, 10) + "/deliveries"
}
