// Command local runs Hookfan's whole topology on an AWS emulator: the
// config's topic, queues, DLQs, subscriptions, table, archive and secrets
// are created through the SDK, ingest is served behind an API
// Gateway–shaped adapter, one poller per destination queue runs the deliver
// function with the SQS event source mapping's semantics, and an archiver
// writes the event archive.
//
//	go run ./infra/local --config infra/local/dev.json --secrets infra/local/dev-secrets.json
//	go run ./infra/local --stop-emulator
//
// With no --endpoint and no AWS_ENDPOINT_URL it uses a persistent moto
// server: started on a free loopback port the first time, recorded in
// --state-dir, and reused by every later run, so stopping and starting the
// stack loses nothing. --stop-emulator stops it (and everything it held).
// SIGINT or SIGTERM stops receiving, lets the batches in flight finish, and
// exits without losing a message.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/infra/local/devstate"
	"github.com/hookfan/hookfan/infra/local/fakeprovider"
	"github.com/hookfan/hookfan/infra/local/foreground"
	"github.com/hookfan/hookfan/shared/awsconfig"
	"github.com/hookfan/hookfan/shared/awsconfig/lambdaenv"
	"github.com/hookfan/hookfan/shared/config"
	"github.com/hookfan/hookfan/shared/transform"
)

func main() {
	log := lambdaenv.Logger()
	if err := run(log); err != nil {
		if !reportConfigError(os.Stderr, err) {
			log.Error("local stack failed", "error", err.Error())
		}
		os.Exit(1)
	}
}

// configError is a configuration that does not load: the developer reads
// it in a terminal, so it prints as plain lines, not one JSON log line
// with its newlines escaped.
type configError struct{ err error }

func (e configError) Error() string { return e.err.Error() }
func (e configError) Unwrap() error { return e.err }

// reportConfigError prints a configError as plain lines, one problem a
// line, and says whether err was one.
func reportConfigError(w io.Writer, err error) bool {
	var ce configError
	if !errors.As(err, &ce) {
		return false
	}
	lines := strings.Split(ce.Error(), "\n")
	fmt.Fprintf(w, "local: %s\n", lines[0])
	for _, l := range lines[1:] {
		fmt.Fprintf(w, "  %s\n", l)
	}
	return true
}

func run(log *slog.Logger) error {
	cfgPath := flag.String("config", "", "Hookfan config JSON (default: the hookfan context of ./cdk.json)")
	secretsPath := flag.String("secrets", "", "JSON object of secret name → value or list of values")
	listen := flag.String("listen", "127.0.0.1:8080", "where POST /webhooks/{source} is served: a loopback address unless "+allowNonLoopbackFlag)
	allowNonLoopback := flag.Bool(strings.TrimPrefix(allowNonLoopbackFlag, "--"), false, "let --listen serve an address other machines may reach (its sources verify with the secrets of --secrets; make dev's are public)")
	endpoint := flag.String("endpoint", os.Getenv("AWS_ENDPOINT_URL"), "the AWS emulator (default AWS_ENDPOINT_URL; empty: the persistent moto_server of --state-dir)")
	prefix := flag.String("prefix", devstate.DefaultPrefix, "prefix of every resource name on the emulator")
	stateDir := flag.String("state-dir", devstate.DefaultStateDir, "where the persistent emulator is recorded")
	stopEmulator := flag.Bool("stop-emulator", false, "stop the persistent emulator of --state-dir (losing everything it holds) and exit")
	callTimeout := flag.Duration("call-timeout", devstack.DefaultCallTimeout, "deadline of each call the functions make to the emulator (AWS's are 1-4 s; an emulator on a busy machine needs more)")
	fakes := flag.Bool("fake-providers", true, "serve a Stripe- or GitHub-shaped API at the apiUrl of each reconciled source that points to loopback over http (infra/local/fakeprovider)")
	ingestTimeout := flag.Duration("ingest-timeout", devstack.DefaultLocalIngestTimeout, "deadline of each request to the gateway (deployed: 10s)")
	flag.Parse()
	warning, err := checkListen(*listen, *allowNonLoopback, *secretsPath)
	if err != nil {
		return configError{err}
	}
	if warning != "" {
		log.Warn("listening beyond loopback: anyone who reaches the port can send events that verify", "listen", *listen, "secrets", *secretsPath)
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if *stopEmulator {
		return stopPersistent(ctx, *stateDir, os.Stderr)
	}
	// Ctrl-C reaches this process alone, not the make that started it:
	// make dev then exits with the stack's own status (0 after a clean
	// stop) instead of make's 130 for an interrupted recipe.
	restore, _ := foreground.Take(os.Stdin)
	defer restore()

	var cfg *config.Config
	if *cfgPath != "" {
		cfg, err = config.LoadFile(*cfgPath)
	} else {
		cfg, err = config.LoadCDKJSON("cdk.json")
	}
	if err == nil {
		err = transform.CheckConfig(cfg)
	}
	if err != nil {
		return configError{err}
	}
	secretValues, err := devstate.LoadSecrets(*secretsPath)
	if err != nil {
		return err
	}
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v) // emulators accept any credentials
		}
	}
	emulator := emulatorInfo{url: *endpoint, kind: "given"}
	if *endpoint == "" {
		s, reused, err := devstack.EnsureMoto(ctx, *stateDir)
		if err != nil {
			return err
		}
		emulator = emulatorInfo{url: s.URL, pid: s.PID, log: s.Log, kind: map[bool]string{true: "reused", false: "started"}[reused]}
		log.Info(emulator.kind+" the persistent moto_server", "endpoint", s.URL, "pid", s.PID, "log", s.Log, "state_dir", *stateDir)
	}
	os.Setenv("AWS_ENDPOINT_URL", emulator.url)
	awsCfg, err := awsconfig.Load(ctx)
	if err != nil {
		return err
	}
	stack, err := devstack.New(ctx, devstack.Options{
		Config: cfg, Secrets: secretValues, Prefix: *prefix,
		Clients: devstack.NewClients(awsCfg), Region: awsCfg.Region, Log: log,
		CallTimeout: *callTimeout, IngestTimeout: *ingestTimeout,
	})
	if err != nil {
		return err
	}
	ln, err := net.Listen("tcp", *listen)
	if err != nil {
		return fmt.Errorf("listen on %s: %w", *listen, err)
	}
	srv := &http.Server{Handler: stack.Gateway, ReadHeaderTimeout: 10 * time.Second}
	go func() {
		if err := srv.Serve(ln); err != nil && !errors.Is(err, http.ErrServerClosed) {
			log.Error("http server failed", "error", err.Error())
			stop()
		}
	}()
	var served []fakeprovider.Served
	if *fakes {
		if served, err = fakeprovider.Serve(ctx, cfg, secretValues, "http://"+ln.Addr().String()); err != nil {
			return err
		}
	}
	printBanner(os.Stderr, banner{
		stack: stack, cfg: cfg, base: "http://" + ln.Addr().String(), emulator: emulator, region: awsCfg.Region,
		secretsFile: *secretsPath, secretsInFile: secretValues, configFile: *cfgPath, prefix: *prefix, stateDir: *stateDir,
		fakes: served,
	})
	if warning != "" {
		// Last, under the banner, where it is read.
		fmt.Fprintln(os.Stderr, warning)
	}

	done := make(chan struct{})
	go func() { stack.Run(ctx); close(done) }()
	<-ctx.Done()
	log.Info("shutting down: no new requests or receives; finishing batches in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	<-done
	if emulator.pid != 0 {
		log.Info("stopped cleanly; the emulator keeps running with everything it holds (stop it: make dev-stop)", "endpoint", emulator.url, "pid", emulator.pid)
	} else {
		log.Info("stopped cleanly")
	}
	return nil
}

func stopPersistent(ctx context.Context, dir string, w io.Writer) error {
	s, stopped, err := devstack.StopEmulator(ctx, dir)
	switch {
	case err != nil:
		return err
	case stopped:
		fmt.Fprintf(w, "stopped the emulator at %s (pid %d); the next make dev starts a clean one\n", s.URL, s.PID)
	case s.PID != 0:
		fmt.Fprintf(w, "the emulator recorded in %s (pid %d) had already exited; record removed\n", dir, s.PID)
	default:
		fmt.Fprintf(w, "no emulator recorded in %s; nothing to stop\n", dir)
	}
	return nil
}

type emulatorInfo struct {
	url, log, kind string
	pid            int
}

type banner struct {
	stack         *devstack.Stack
	cfg           *config.Config
	base          string
	emulator      emulatorInfo
	region        string
	secretsFile   string
	secretsInFile map[string][]string
	configFile    string
	prefix        string
	stateDir      string
	fakes         []fakeprovider.Served
}

// printBanner tells a developer where everything is and the commands that
// work against it.
func printBanner(w io.Writer, b banner) {
	t := b.stack.Topology
	p := func(format string, args ...any) { fmt.Fprintf(w, format+"\n", args...) }
	p("\nHookfan local stack on %s, %s API shape (config api.type)", b.base, b.cfg.API.Kind())
	switch b.emulator.kind {
	case "given":
		p("  emulator   %s (given by --endpoint / AWS_ENDPOINT_URL)", b.emulator.url)
	default:
		p("  emulator   %s: moto_server pid %d, %s; it outlives this process and keeps what it holds", b.emulator.url, b.emulator.pid, b.emulator.kind)
		p("             log %s; stop it (losing everything): make dev-stop", b.emulator.log)
	}
	p("  region     %s", b.region)
	p("  table      %s", t.TableName)
	p("  topic      %s", t.TopicARN)
	if t.Archive.Bucket != "" {
		p("  archive    s3://%s (%d days)", t.Archive.Bucket, t.Archive.Days)
	} else {
		p("  archive    off (archive.days is 0)")
	}
	if len(t.Unsubscribed) > 0 {
		p("  removed    from the topic, not in this configuration (they keep what they hold): %s", strings.Join(t.Unsubscribed, ", "))
	}
	p("\nSources (POST a signed webhook to the URL):")
	for _, s := range b.cfg.Sources {
		p("  %-12s %s/webhooks/%s   secret %s", s.Name, b.base, s.Name, s.Verify.SecretName)
	}
	p("\nDestinations:")
	for _, l := range t.Lanes {
		// The host only: a URL's path or query may carry a token.
		to := l.Destination.URLHost()
		if l.Destination.URLSecretName != "" {
			to = "the URL in secret " + l.Destination.URLSecretName
		}
		secret := "secret " + l.SecretID
		if l.Destination.AWSTarget() {
			to, secret = l.Destination.Type+" "+l.Destination.Target, "unsigned"
		}
		p("  %-12s → %s   %s", l.Destination.Name, to, secret)
		p("  %-12s   queue %s", "", l.QueueURL)
		p("  %-12s   DLQ   %s", "", l.DLQURL)
	}
	// AWS CLI v1 reads neither AWS_ENDPOINT_URL nor AWS_REGION: the
	// commands name the endpoint and the export sets the default region,
	// which both versions read.
	p("\nThe aws CLI (v1 or v2) against the emulator:")
	p("  export AWS_DEFAULT_REGION=%s AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test", b.region)
	p("  aws --endpoint-url %s sqs list-queues --queue-name-prefix %s", b.emulator.url, b.prefix)
	p("  aws --endpoint-url %s dynamodb scan --table-name %s --max-items 5", b.emulator.url, t.TableName)
	if t.Archive.Bucket != "" {
		p("  aws --endpoint-url %s s3 ls --recursive s3://%s/", b.emulator.url, t.Archive.Bucket)
	}
	makeDefaults := b.opsFlags() == " --config infra/local/dev.json" && b.secretsFile == "infra/local/dev-secrets.json" && b.base == "http://127.0.0.1:8080"
	p("\nReceive (a subscriber that verifies and prints each delivery), in another terminal:")
	if makeDefaults {
		p("  make receive                  (ANSWER=500|410|429 RETRY_AFTER=30 DELAY=2s FAIL_FIRST=3 to misbehave)")
	}
	for _, cmd := range receiveCommands(b) {
		p("  %s", cmd)
	}
	src := "stripe"
	if len(b.cfg.Sources) > 0 {
		if _, ok := b.cfg.Source("stripe"); !ok {
			src = b.cfg.Sources[0].Name
		}
	}
	p("\nSend a signed sample event, in a third terminal:")
	if makeDefaults {
		p("  make send SOURCE=%s          (BODY=captured.json to send your own payload)", src)
	}
	p("  go run ./events/send%s --source %s", b.sendFlags(), src)
	dest := "DESTINATION"
	if len(t.Lanes) > 0 {
		dest = t.Lanes[0].Destination.Name
	}
	opsFlags := b.opsFlags()
	if opsFlags == " --config infra/local/dev.json" {
		p("\nOperate (make ops ARGS=\"COMMAND\", or go run ./infra/ops%s COMMAND):", opsFlags)
	} else {
		p("\nOperate (go run ./infra/ops%s COMMAND):", opsFlags)
	}
	p("  events --since 10m                    recent events, newest first, with each destination's state")
	p("  status EVENT                          an event (evt_… or source:provider-id) at every destination")
	p("  dlq %-33s what waits in a DLQ", dest)
	p("  redrive %-29s move the DLQ back to the queue", dest)
	p("  replay --destination %s --since 1h   send archived events again (--event ID, --dry-run)", dest)
	for _, s := range b.cfg.Reconciled() {
		p("  reconcile %-27s bring in what %s sent and Hookfan never got (--since 1h, --dry-run); also every %s", s.Name, s.Name, s.Reconcile.Interval())
	}
	if len(b.fakes) > 0 {
		p("\nFake provider APIs (reconciliation lists and redelivers through them):")
		for _, f := range b.fakes {
			what := "event=issues -d action=opened"
			if f.Kind == "stripe" {
				what = "type=payment_intent.succeeded"
			}
			p("  %-12s %s; an event Hookfan never got: curl -d %s -d send=false -d ago=5m %s", f.Source, f.URL, what, f.Control)
		}
	}
	p("\nStop with Ctrl-C: batches in flight finish and nothing is lost; the next make dev picks up where this one stopped.\n")
}

// receiveCommands returns a working receive command per distinct
// destination secret: from the secrets file when it holds the secret,
// otherwise read from the emulator (a generated one).
func receiveCommands(b banner) []string {
	seen := map[string]bool{}
	var cmds []string
	for _, l := range b.stack.Topology.Lanes {
		if seen[l.SecretID] || l.Destination.AWSTarget() {
			continue // an AWS target's lane is not signed: nothing to receive
		}
		seen[l.SecretID] = true
		listen := ""
		if host := hostPort(l.Destination.URL); host != "" && host != "127.0.0.1:9000" {
			listen = " --listen " + host
		}
		if _, ok := b.secretsInFile[l.SecretID]; ok && b.secretsFile != "" {
			cmds = append(cmds, fmt.Sprintf("go run ./events/receive%s --secrets %s --secret-name %s", listen, b.secretsFile, l.SecretID))
			continue
		}
		cmds = append(cmds, fmt.Sprintf(`go run ./events/receive%s --secret "$(AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test aws --endpoint-url %s --region %s secretsmanager get-secret-value --secret-id %s --query SecretString --output text)"`,
			listen, b.emulator.url, b.region, l.SecretID))
	}
	sort.Strings(cmds)
	return cmds
}

func hostPort(rawURL string) string {
	rest, ok := strings.CutPrefix(rawURL, "http://")
	if !ok {
		return ""
	}
	host, _, _ := strings.Cut(rest, "/")
	return host
}

func (b banner) sendFlags() string {
	var f string
	if b.configFile != "" {
		f += " --config " + b.configFile
	}
	if b.secretsFile != "" {
		f += " --secrets " + b.secretsFile
	}
	if b.base != "http://127.0.0.1:8080" {
		f += " --url " + b.base
	}
	return f
}

func (b banner) opsFlags() string {
	var f string
	if b.configFile != "" {
		f += " --config " + b.configFile
	}
	if b.prefix != devstate.DefaultPrefix {
		f += " --prefix " + b.prefix
	}
	if b.emulator.kind == "given" {
		f += " --endpoint " + b.emulator.url
	} else if b.stateDir != devstate.DefaultStateDir {
		f += " --state-dir " + b.stateDir
	}
	return f
}
