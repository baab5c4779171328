package devstack

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"os"
	"sync"
	"time"

	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/secrets"
)

// IngestTimeout is the ingest function's timeout, as deployed.
const IngestTimeout = 10 * time.Second

// Options configure a Stack.
type Options struct {
	Config  *config.Config
	Secrets map[string][]string // secret name → values, written to the emulator
	Prefix  string              // resource name prefix
	Clients Clients
	Region  string
	Log     *slog.Logger
	// EMF receives Embedded Metric Format lines when the config's sink is
	// "emf" (default os.Stdout).
	EMF io.Writer
	// PollWait is the pollers' long-poll wait (default 2s; shorter stops sooner).
	PollWait time.Duration
	// Pollers is the number of concurrent batches per destination (default
	// the destination's maxConcurrency, at most 2 locally).
	Pollers int
	// SecretTTL is the secret caches' TTL (default secrets.DefaultTTL).
	SecretTTL time.Duration
}

// Stack is the whole topology on an emulator with the functions running
// against it: ingest behind Gateway, one poller per destination queue.
type Stack struct {
	Topology *Topology
	Ingest   *ingest.Handler
	Gateway  http.Handler
	Deliver  map[string]*delivery.Handler
	Store    *dedupe.DynamoDB
	pollers  []*Poller
}

// New provisions the topology and builds the functions the way their
// main.go does, with the emulator's clients.
func New(ctx context.Context, o Options) (*Stack, error) {
	if o.Log == nil {
		o.Log = slog.New(slog.NewJSONHandler(os.Stdout, nil))
	}
	if o.EMF == nil {
		o.EMF = os.Stdout
	}
	if o.PollWait == 0 {
		o.PollWait = 2 * time.Second
	}
	if o.SecretTTL == 0 {
		o.SecretTTL = secrets.DefaultTTL
	}
	topo, err := Provision(ctx, o.Clients, o.Config, o.Secrets, o.Prefix)
	if err != nil {
		return nil, err
	}
	s := &Stack{Topology: topo, Deliver: map[string]*delivery.Handler{}, Store: dedupe.NewDynamoDB(o.Clients.DynamoDB, topo.TableName)}
	newRecorder := func() (*metrics.Recorder, error) {
		sink, err := metrics.NewSink(o.Config.Metrics.SinkName(), o.EMF, o.Clients.CloudWatch)
		if err != nil {
			return nil, err
		}
		return metrics.NewRecorder(sink), nil
	}
	rec, err := newRecorder()
	if err != nil {
		return nil, err
	}
	s.Ingest, err = ingest.New(ingest.Options{
		Sources:   o.Config.Sources,
		TopicARN:  topo.TopicARN,
		Publisher: o.Clients.SNS,
		Secrets:   secrets.NewCache(o.Clients.Secrets, secrets.WithTTL(o.SecretTTL)),
		Metrics:   rec,
		Logger:    o.Log.With("function", "ingest"),
	})
	if err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	s.Gateway = Gateway(s.Ingest.Handle, IngestTimeout, o.Log.With("component", "gateway"))
	for _, lane := range topo.Lanes {
		d := lane.Destination
		rec, err := newRecorder()
		if err != nil {
			return nil, err
		}
		h, err := delivery.NewHandler(delivery.Options{
			Destination: d,
			QueueURL:    lane.QueueURL,
			SecretID:    lane.SecretID,
			RecordTTL:   o.Config.RecordTTL(),
			Store:       s.Store,
			SQS:         o.Clients.SQS,
			Secrets:     secrets.NewCache(o.Clients.Secrets, secrets.WithTTL(o.SecretTTL)),
			Client:      delivery.NewClient(d),
			Metrics:     rec,
			Logger:      o.Log.With("function", "deliver-"+d.Name),
		})
		if err != nil {
			return nil, fmt.Errorf("deliver %s: %w", d.Name, err)
		}
		s.Deliver[d.Name] = h
		pollers := o.Pollers
		if pollers == 0 {
			pollers = min(d.Concurrency(), 2)
		}
		s.pollers = append(s.pollers, &Poller{
			SQS: o.Clients.SQS, QueueURL: lane.QueueURL, QueueARN: lane.QueueARN, Region: o.Region,
			BatchSize: d.Batch(), Concurrency: pollers, WaitTime: o.PollWait,
			FunctionTimeout: d.FunctionTimeout(), Handler: h.Handle,
			Log: o.Log.With("component", "poller", "destination", d.Name),
		})
	}
	return s, nil
}

// Run runs every poller until ctx is done, then waits for the batches in
// flight to finish.
func (s *Stack) Run(ctx context.Context) {
	var wg sync.WaitGroup
	for _, p := range s.pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Run(ctx)
		}()
	}
	wg.Wait()
}
