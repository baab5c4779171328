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

	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/shared/archive"
	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/dedupe"
	"github.com/hookfan/hookfan/shared/delivery"
	"github.com/hookfan/hookfan/shared/delivery/sender/lambdatarget"
	"github.com/hookfan/hookfan/shared/ingest"
	"github.com/hookfan/hookfan/shared/metrics"
	"github.com/hookfan/hookfan/shared/metrics/putmetricdata"
	"github.com/hookfan/hookfan/shared/pacing"
	"github.com/hookfan/hookfan/shared/pausing"
	"github.com/hookfan/hookfan/shared/payload"
	"github.com/hookfan/hookfan/shared/reconcile"
	"github.com/hookfan/hookfan/shared/replayguard"
	"github.com/hookfan/hookfan/shared/secrets"
)

// IngestTimeout is the ingest function's timeout, as deployed.
const IngestTimeout = 10 * time.Second

// Defaults of the local stack's timeouts. The functions' calls are given
// far longer than in AWS (whose defaults the shared packages keep): the
// emulator answers in milliseconds on an idle machine and in seconds on a
// loaded one, and a call cut short there fails what AWS would have done.
const (
	// DefaultLocalIngestTimeout bounds each request to the local gateway.
	DefaultLocalIngestTimeout = 30 * time.Second
	// DefaultCallTimeout bounds each call a function makes to the emulator:
	// secret fetches, claims and record writes, visibility changes, lane
	// reads and writes, re-queued copies.
	DefaultCallTimeout = 10 * time.Second
)

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
	// IngestTimeout bounds each request to the gateway (default
	// DefaultLocalIngestTimeout; IngestTimeout as deployed).
	IngestTimeout time.Duration
	// CallTimeout bounds each call the functions make to the emulator
	// (default DefaultCallTimeout). The deliver function's timeout grows by
	// what its claim, record and visibility calls gain over their AWS
	// defaults, so the POST keeps the destination's whole timeout.
	CallTimeout time.Duration
	// WrapStore, when set, wraps each deliver function's record store (tests
	// inject failures with it).
	WrapStore func(delivery.Store) delivery.Store
	// ArchiveBuffer is how long the archiver gathers records before writing
	// an object (default 1s).
	ArchiveBuffer time.Duration
	// WrapReplay and WrapPublisher, when set, wrap the ingest function's
	// replay store and SNS publisher (tests inject failures with them).
	WrapReplay    func(ingest.ReplayGuard) ingest.ReplayGuard
	WrapPublisher func(ingest.Publisher) ingest.Publisher
	// ProbeInterval is how often each lane that pauses is ticked (its probe
	// schedule; default the lane's probeEvery, which is at least a minute:
	// tests tick faster).
	ProbeInterval time.Duration
	// Lambda is the Invoke API lambda targets are invoked through: a
	// function under the Lambda RIE (RIEInvoker); without it a lambda
	// target's client is the emulator's own.
	Lambda lambdatarget.API
	// ReconcileNow replaces the reconciliation's clock (tests); nil is
	// time.Now.
	ReconcileNow func() time.Time
	// NoReconcileSchedule leaves reconciliation to explicit Runs (tests):
	// Run does not schedule it every its every.
	NoReconcileSchedule bool
}

// Stack is the whole topology on an emulator with the functions running
// against it: ingest behind Gateway, one poller per destination queue.
type Stack struct {
	Topology *Topology
	Ingest   *ingest.Handler
	Gateway  http.Handler
	Deliver  map[string]*delivery.Handler
	Store    *dedupe.DynamoDB
	// Archiver writes the archive; nil when the archive is off.
	Archiver *Archiver
	// Replay is ingest's replay store on the table (its calls serialized
	// per key, see replayLocked); nil when no source has replay protection.
	Replay *replayguard.DynamoDB
	// Payloads is the payload bucket's store; nil without large payloads.
	Payloads *payload.S3
	// Lanes keeps the pause state of the lanes that pause, and Mappings
	// their event source mapping switches (a queue tag each).
	Lanes    pausing.Store
	Mappings map[string]devstate.TagSwitch
	// Pace keeps the paced lanes' buckets on the table, through the same
	// per-item locks as Lanes (see NewPaceLocked).
	Pace pacing.Store
	// Reconciler reconciles the sources with a reconcile block (Run
	// schedules each every its every); nil when none has one.
	Reconciler *reconcile.Reconciler
	pollers    []*Poller
	tickers    []ticker
	opts       Options
	locks      sync.Map              // per-record locks shared by every deliver instance (see itemLocked)
	gates      map[string]*GroupGate // per ordered lane's queue URL, shared by its instances
}

// New provisions the topology and builds the functions with the assembly
// their mains call (ingest.Assemble, delivery.Assemble) from the contract
// the stack renders for them (ingest.FunctionEnv, delivery.LaneEnv), on
// the emulator's clients.
func New(ctx context.Context, o Options) (*Stack, error) {
	if o.Log == nil {
		o.Log = lambdaenv.Logger()
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
	if o.IngestTimeout <= 0 {
		o.IngestTimeout = DefaultLocalIngestTimeout
	}
	if o.CallTimeout <= 0 {
		o.CallTimeout = DefaultCallTimeout
	}
	topo, err := Provision(ctx, o.Clients, o.Config, o.Secrets, o.Prefix)
	if err != nil {
		return nil, err
	}
	s := &Stack{Topology: topo, Deliver: map[string]*delivery.Handler{}, Store: dedupe.NewDynamoDB(o.Clients.DynamoDB, topo.TableName),
		Mappings: map[string]devstate.TagSwitch{}, opts: o}
	s.Lanes = newLaneLocked(pausing.NewDynamoDB(o.Clients.DynamoDB, topo.TableName), &s.locks)
	s.Pace = NewPaceLocked(pacing.NewDynamoDB(o.Clients.DynamoDB, topo.TableName), &s.locks)
	for _, l := range topo.Lanes {
		if _, pauses := l.Destination.PauseRule(); pauses {
			s.Mappings[l.Destination.Name] = devstate.TagSwitch{SQS: o.Clients.SQS, QueueURL: l.QueueURL}
		}
	}
	sink, err := s.newSink()
	if err != nil {
		return nil, err
	}
	if topo.PayloadBucket != "" {
		// Ingest also writes each body into the archive bucket, and the
		// deliverers read it there once the payload object is gone, as the
		// deployed functions do (the archive keeps the bodies).
		s.Payloads = &payload.S3{API: o.Clients.S3, Bucket: topo.PayloadBucket, Archive: topo.Archive.Bucket}
	}
	env := ingest.FunctionEnv(o.Config, ingest.Resources{TopicARN: topo.TopicARN, PayloadBucket: topo.PayloadBucket, ArchiveBucket: topo.Archive.Bucket, OrderedTopicARN: topo.OrderedTopicARN, ReplayTable: topo.TableName})
	c := ingest.Clients{Publisher: o.Clients.SNS, Secrets: s.newSecretCache(),
		Metrics: sink, Logger: o.Log.With("function", "ingest")}
	if s.Payloads != nil {
		c.Payloads = s.Payloads
	}
	if o.WrapPublisher != nil {
		c.Publisher = o.WrapPublisher(c.Publisher)
	}
	if env.ReplayTable != "" {
		s.Replay = replayguard.NewDynamoDB(o.Clients.DynamoDB, topo.TableName)
		c.Replay = &replayLocked{next: s.Replay, locks: &s.locks}
		if o.WrapReplay != nil {
			c.Replay = o.WrapReplay(c.Replay)
		}
	}
	if s.Ingest, err = ingest.Assemble(env, c); err != nil {
		return nil, fmt.Errorf("ingest: %w", err)
	}
	names := make([]string, len(o.Config.Sources))
	for i, src := range o.Config.Sources {
		names[i] = src.Name
	}
	glog := o.Log.With("component", "gateway", "api_type", o.Config.API.Kind())
	if o.Config.API.Kind() == config.APITypeHTTP {
		s.Gateway = HTTPGateway(s.Ingest.HandleHTTP, names, o.IngestTimeout, glog)
	} else {
		s.Gateway = Gateway(s.Ingest.Handle, names, o.IngestTimeout, glog)
	}
	for _, lane := range topo.Lanes {
		h, err := s.newDeliver(lane)
		if err != nil {
			return nil, err
		}
		s.Deliver[lane.Destination.Name] = h
		if rule, pauses := lane.Destination.PauseRule(); pauses {
			every := o.ProbeInterval
			if every == 0 {
				every = rule.ProbeEvery
			}
			s.tickers = append(s.tickers, ticker{handler: h, every: every})
		}
		pollers := o.Pollers
		if pollers == 0 {
			pollers = min(lane.Destination.Concurrency(), 2)
		}
		s.pollers = append(s.pollers, s.newPoller(lane, h, pollers))
	}
	if s.Reconciler, err = s.newReconciler(); err != nil {
		return nil, fmt.Errorf("reconcile: %w", err)
	}
	if a := topo.Archive; a.QueueURL != "" {
		s.Archiver = &Archiver{
			SQS: o.Clients.SQS, QueueURL: a.QueueURL, Writer: archive.NewWriter(o.Clients.S3, a.Bucket, devstate.ArchiveQueueName(topo.Prefix)),
			Buffer: o.ArchiveBuffer, WaitTime: o.PollWait, Log: o.Log.With("component", "archiver"),
		}
	}
	return s, nil
}

// ticker is one lane's probe schedule: what EventBridge does in AWS.
type ticker struct {
	handler *delivery.Handler
	every   time.Duration
}

func (t ticker) run(ctx context.Context) {
	tick := time.NewTicker(t.every)
	defer tick.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-tick.C:
			_, _ = t.handler.Tick(ctx) // it logs its outcome
		}
	}
}

// Run runs every poller, probe schedule and the archiver until ctx is
// done, then waits for the batches in flight to finish and the archiver
// to write what it holds.
func (s *Stack) Run(ctx context.Context) {
	var wg sync.WaitGroup
	if s.Archiver != nil {
		wg.Go(func() { s.Archiver.Run(ctx) })
	}
	for _, t := range s.tickers {
		wg.Go(func() { t.run(ctx) })
	}
	if s.Reconciler != nil && !s.opts.NoReconcileSchedule {
		for _, src := range s.opts.Config.Reconciled() {
			rs := reconcileSchedule{r: s.Reconciler, source: src.Name, every: src.Reconcile.Interval(), log: s.opts.Log}
			wg.Go(func() { rs.run(ctx) })
		}
	}
	for _, p := range s.pollers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			_ = p.Run(ctx)
		}()
	}
	wg.Wait()
}

// newSink is the metrics sink the configuration names: EMF lines to
// Options.EMF, as the deployed functions write them, or PutMetricData on
// the emulator (metrics.sink "cloudwatch", which only the local stack has:
// it is built here, in this process, so that no function binary links the
// CloudWatch client).
func (s *Stack) newSink() (metrics.Sink, error) {
	switch name := s.opts.Config.Metrics.SinkName(); name {
	case config.SinkEMF:
		return metrics.NewEMF(s.opts.EMF), nil
	case config.SinkCloudWatch:
		return putmetricdata.New(s.opts.Clients.CloudWatch), nil
	default:
		return nil, fmt.Errorf("metrics.sink %q: unknown sink; use %q or %q", name, config.SinkEMF, config.SinkCloudWatch)
	}
}

// newDeliver builds one deliver function instance for a lane with
// delivery.Assemble, as its main does, on the emulator's clients: the
// record store and the lanes' state serialized per item (see itemLocked),
// the event source mapping a queue tag (TagSwitch).
func (s *Stack) newDeliver(ln Lane) (*delivery.Handler, error) {
	d := ln.Destination
	sink, err := s.newSink()
	if err != nil {
		return nil, err
	}
	store := newItemLocked(s.Store, &s.locks)
	if s.opts.WrapStore != nil {
		store = s.opts.WrapStore(store)
	}
	c := delivery.Clients{Store: store, SQS: s.opts.Clients.SQS, Secrets: s.newSecretCache(),
		Lanes: s.Lanes, Pace: s.Pace, Metrics: sink, Logger: s.opts.Log.With("function", "deliver-"+d.Name),
		// A held message waits for the next tick, as in AWS it waits for
		// the next probe.
		Timeouts: s.callTimeouts(), HoldFor: s.opts.ProbeInterval, Credentials: s.opts.Clients.Credentials}
	if s.Payloads != nil {
		c.Payloads = s.Payloads
	}
	if sw, pauses := s.Mappings[d.Name]; pauses {
		c.Switch = sw
	}
	// A lane's AWS target builds its client on the emulator's
	// configuration, as in AWS; a lambda target invokes the RIE's function
	// instead when there is one (the sender takes it for its kind's API).
	c.AWS = &s.opts.Clients.Config
	if s.opts.Lambda != nil {
		c.Target = s.opts.Lambda
	}
	if g := s.gate(ln); g != nil {
		c.SQS = g.Observe(c.SQS)
	}
	env := delivery.LaneEnv(s.opts.Config, d, delivery.LaneResources{Table: s.Topology.TableName, QueueURL: ln.QueueURL, QueueARN: ln.QueueARN, SecretID: ln.SecretID, PayloadBucket: s.Topology.PayloadBucket, ArchiveBucket: s.Topology.Archive.Bucket})
	return delivery.Assemble(env, c)
}

// newSecretCache is a secret cache as the functions build it, its fetches
// bounded by the call timeout.
func (s *Stack) newSecretCache() *secrets.Cache {
	return secrets.NewCache(s.opts.Clients.Secrets, secrets.WithTTL(s.opts.SecretTTL), secrets.WithFetchTimeout(s.opts.CallTimeout))
}

// callTimeouts are the deliver function's call timeouts on the emulator.
func (s *Stack) callTimeouts() delivery.CallTimeouts {
	c := s.opts.CallTimeout
	// The emulator's claims take far longer, and vary far more, than
	// DynamoDB's: a paced request waits longer after its token.
	return delivery.CallTimeouts{Claim: c, Finish: c, Visibility: c, LaneRead: c, Lane: c, Requeue: c, Pace: c, PaceAlign: LocalPaceAlign}
}

// LocalPaceAlign is delivery.PaceAlign on the local stack, where a claim
// on the emulator takes up to a few hundred milliseconds.
const LocalPaceAlign = 600 * time.Millisecond

// FunctionTimeout is a deliver function's timeout on the local stack: as
// deployed, plus what the claim, record and visibility calls gained over
// their defaults, which the POST's budget is cut by.
func (s *Stack) FunctionTimeout(d config.Destination) time.Duration {
	c := s.opts.CallTimeout
	extra := max(c-delivery.ClaimTimeout, 0) + max(c-delivery.FinishTimeout, 0) + max(c-delivery.VisibilityCallTimeout, 0)
	return d.FunctionTimeout() + extra
}

func (s *Stack) newPoller(ln Lane, h *delivery.Handler, concurrency int) *Poller {
	p := &Poller{
		SQS: s.opts.Clients.SQS, QueueURL: ln.QueueURL, QueueARN: ln.QueueARN, Region: s.opts.Region,
		BatchSize: ln.Destination.ReceiveBatch(), Window: ln.Destination.BatchWindow(), Concurrency: concurrency, WaitTime: s.opts.PollWait,
		FunctionTimeout: s.FunctionTimeout(ln.Destination), Handler: h.Handle,
		Log: s.opts.Log.With("component", "poller", "destination", ln.Destination.Name),
	}
	if sw, pauses := s.Mappings[ln.Destination.Name]; pauses {
		p.Mapping = sw
	}
	p.Gate = s.gate(ln)
	return p
}

// gate is an ordered lane's GroupGate, shared by all its instances; nil
// for a standard lane.
func (s *Stack) gate(ln Lane) *GroupGate {
	if !ln.Destination.Ordered() {
		return nil
	}
	if s.gates == nil {
		s.gates = map[string]*GroupGate{}
	}
	g, ok := s.gates[ln.QueueURL]
	if !ok {
		g = &GroupGate{MaxReceiveCount: ln.Destination.MaxReceiveCount(), Visibility: ln.Destination.VisibilityTimeout(),
			Log: s.opts.Log.With("component", "poller", "destination", ln.Destination.Name)}
		s.gates[ln.QueueURL] = g
	}
	return g
}

// HeldMessages is how many received messages the ordered lanes' gates held
// because their key had another in flight (see GroupGate): 0 while the
// emulator keeps the FIFO rules itself.
func (s *Stack) HeldMessages() int {
	n := 0
	for _, g := range s.gates {
		n += g.Holds()
	}
	return n
}

// AddInstance adds another deliver function instance, with its own poller,
// on a destination's queue: a second Lambda execution environment racing
// the first. Call it before Run.
func (s *Stack) AddInstance(destination string) error {
	lane, ok := s.Topology.Lane(destination)
	if !ok {
		return fmt.Errorf("no destination %q", destination)
	}
	h, err := s.newDeliver(lane)
	if err != nil {
		return err
	}
	s.pollers = append(s.pollers, s.newPoller(lane, h, 1))
	return nil
}
