// Command local runs Hookfan's whole topology on an AWS emulator: the
// config's topic, queues, DLQs, subscriptions, table and secrets are
// created through the SDK, ingest is served behind an API Gateway–shaped
// adapter, and one poller per destination queue runs the deliver function
// with the SQS event source mapping's semantics.
//
//	go run ./infra/local --config infra/local/dev.json --secrets infra/local/dev-secrets.json
//
// With no --endpoint and no AWS_ENDPOINT_URL it starts moto_server on a free
// loopback port. SIGINT or SIGTERM stops receiving, lets the batches in
// flight finish, and exits without losing a message.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"syscall"
	"time"

	"github.com/hookfan/hookfan/infra/local/devstack"
	"github.com/hookfan/hookfan/shared/awsconfig"
	"github.com/hookfan/hookfan/shared/config"
)

func main() {
	log := slog.New(slog.NewJSONHandler(os.Stdout, nil))
	if err := run(log); err != nil {
		log.Error("local stack failed", "error", err.Error())
		os.Exit(1)
	}
}

func run(log *slog.Logger) error {
	cfgPath := flag.String("config", "", "Hookfan config JSON (default: the hookfan context of ./cdk.json)")
	secretsPath := flag.String("secrets", "", "JSON object of secret name → value or list of values")
	listen := flag.String("listen", "127.0.0.1:8080", "where POST /webhooks/{source} is served")
	endpoint := flag.String("endpoint", os.Getenv("AWS_ENDPOINT_URL"), "the AWS emulator (default AWS_ENDPOINT_URL; empty starts moto_server)")
	prefix := flag.String("prefix", "hookfan-dev", "prefix of every resource name on the emulator")
	flag.Parse()

	var cfg *config.Config
	var err error
	if *cfgPath != "" {
		cfg, err = config.LoadFile(*cfgPath)
	} else {
		cfg, err = config.LoadCDKJSON("cdk.json")
	}
	if err != nil {
		return err
	}
	secretValues, err := devstack.LoadSecrets(*secretsPath)
	if err != nil {
		return err
	}

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	for k, v := range map[string]string{"AWS_ACCESS_KEY_ID": "test", "AWS_SECRET_ACCESS_KEY": "test"} {
		if os.Getenv(k) == "" {
			os.Setenv(k, v) // emulators accept any credentials
		}
	}
	if *endpoint == "" {
		logPath := filepath.Join(os.TempDir(), "hookfan-moto.log")
		emu, err := devstack.StartMoto(ctx, logPath)
		if err != nil {
			return err
		}
		defer emu.Stop()
		*endpoint = emu.URL
		log.Info("started moto_server", "endpoint", emu.URL, "log", logPath)
	}
	os.Setenv("AWS_ENDPOINT_URL", *endpoint)
	awsCfg, err := awsconfig.Load(ctx)
	if err != nil {
		return err
	}
	stack, err := devstack.New(ctx, devstack.Options{
		Config: cfg, Secrets: secretValues, Prefix: *prefix,
		Clients: devstack.NewClients(awsCfg), Region: awsCfg.Region, Log: log,
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
	printURLs(stack, cfg, "http://"+ln.Addr().String(), *endpoint)

	done := make(chan struct{})
	go func() { stack.Run(ctx); close(done) }()
	<-ctx.Done()
	log.Info("shutting down: no new requests or receives; finishing batches in flight")
	shutdown, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	_ = srv.Shutdown(shutdown)
	<-done
	log.Info("stopped cleanly")
	return nil
}

func printURLs(s *devstack.Stack, cfg *config.Config, base, endpoint string) {
	fmt.Fprintf(os.Stderr, "\nHookfan local stack on %s (emulator %s), %s API shape (config api.type)\n\nSources:\n", base, endpoint, cfg.API.Kind())
	for _, src := range cfg.Sources {
		fmt.Fprintf(os.Stderr, "  %-20s %s/webhooks/%s\n", src.Name, base, src.Name)
	}
	fmt.Fprintf(os.Stderr, "\nDestinations:\n")
	for _, l := range s.Topology.Lanes {
		fmt.Fprintf(os.Stderr, "  %-20s → %s\n  %-20s   queue %s\n  %-20s   DLQ   %s\n", l.Destination.Name, l.Destination.URL, "", l.QueueURL, "", l.DLQURL)
	}
	fmt.Fprintf(os.Stderr, "\nTry: go run ./events/send --source stripe   (and go run ./events/receive in another terminal)\n\n")
}
