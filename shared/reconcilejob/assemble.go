package reconcilejob

import (
	"fmt"
	"log/slog"

	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/loglevel"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/reconcile"
)

// Secrets reads the provider's credential and, through ingest's publish
// path, nothing else: *secrets.Cache.
type Secrets interface {
	ingest.Secrets
	reconcile.Secrets
}

// Clients are what the function calls, built once per process: on the
// AWS SDK by its main (functions/reconcile).
type Clients struct {
	// Publisher publishes what a Stripe source brings in (SNS); required
	// when Env.Ingest is set.
	Publisher ingest.Publisher
	// Payloads stores a large body; required when Env.Ingest names a
	// payload bucket.
	Payloads ingest.Payloads
	Secrets  Secrets
	// Records and Watermarks are the delivery-record table's
	// (reconcile.DynamoDBRecords, reconcile.DynamoDBWatermarks).
	Records    reconcile.Records
	Watermarks reconcile.Watermarks
	// HTTP calls the provider's API; nil: reconcile's default client.
	HTTP    reconcile.Doer
	Metrics metrics.Sink
	Logger  *slog.Logger
}

// Assemble builds the function's handler from its contract and its
// clients: ingest's publish path for a source that publishes, then the
// reconciler of the one source.
func Assemble(env Env, c Clients) (*Handler, error) {
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	log := loglevel.AtLeast(c.Logger, env.LogLevel)
	rc := reconcile.Clients{HTTP: c.HTTP, Secrets: c.Secrets, Records: c.Records, Watermarks: c.Watermarks, Metrics: c.Metrics, Logger: log}
	if env.Ingest != nil {
		if c.Publisher == nil {
			return nil, fmt.Errorf("reconcile function: source %q publishes what it brings in, but no SNS publisher was given", env.Source.Name)
		}
		h, err := ingest.Assemble(*env.Ingest, ingest.Clients{Publisher: c.Publisher, Secrets: c.Secrets, Payloads: c.Payloads, Metrics: c.Metrics, Logger: c.Logger})
		if err != nil {
			return nil, fmt.Errorf("reconcile function: ingest's publish path: %w", err)
		}
		rc.Publisher = h
	}
	r, err := reconcile.Assemble(env.Config(), rc)
	if err != nil {
		return nil, fmt.Errorf("reconcile function: %w", err)
	}
	return NewHandler(env.Source.Name, r, log), nil
}
