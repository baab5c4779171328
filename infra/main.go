// Command infra is Hookfan's CDK app (cdk.json runs it): it reads the typed
// configuration, builds the functions, synthesizes the stack under cdk-nag's
// AwsSolutions and Serverless packs, and fails on any unsuppressed finding.
//
// The configuration comes from, in order: the file named by the
// hookfanConfig context value (cdk deploy -c hookfanConfig=path), or the
// hookfan context value (cdk.json). Outside the CDK CLI (make synth) the
// app reads cdk.json's context itself, feature flags included.
package main

import (
	"fmt"
	"os"
	"strings"

	"github.com/aws/aws-cdk-go/awscdk/v2"
	"github.com/aws/jsii-runtime-go"

	"github.com/hookfan/hookfan/infra/stack"
	"github.com/hookfan/hookfan/shared/config"
)

// stackNameKey is the context key naming the stack (default "Hookfan"), so
// one account can hold several Hookfan stacks (-c hookfanStackName=Hookfan-staging).
const stackNameKey = "hookfanStackName"

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "hookfan:", err)
		os.Exit(1)
	}
}

func run() error {
	defer jsii.Close()
	// cdk.json's context (the configuration and the feature flags) as
	// defaults: outside the CLI they apply as they do under it.
	ctx, err := stack.CDKJSONContext("cdk.json")
	if err != nil {
		return err
	}
	app := awscdk.NewApp(&awscdk.AppProps{Context: &ctx})
	cfg, err := loadConfig(app)
	if err != nil {
		return err
	}
	name := "Hookfan"
	if v, ok := app.Node().TryGetContext(jsii.String(stackNameKey)).(string); ok && v != "" {
		name = v
	}
	if _, err := stack.New(app, name, &stack.Props{Config: cfg}); err != nil {
		return err
	}
	stack.ApplyNag(app, true)
	errs, err := stack.Synth(app)
	if err != nil {
		return err
	}
	if len(errs) > 0 {
		return fmt.Errorf("synthesis has %d unsuppressed error(s):\n  %s", len(errs), strings.Join(errs, "\n  "))
	}
	return nil
}

func loadConfig(app awscdk.App) (*config.Config, error) {
	if path, ok := app.Node().TryGetContext(jsii.String(config.ContextFileKey)).(string); ok && path != "" {
		return config.LoadFile(path)
	}
	if v := app.Node().TryGetContext(jsii.String(config.ContextKey)); v != nil {
		c, err := config.FromValue(v)
		if err != nil {
			return nil, fmt.Errorf("context.%s: %w", config.ContextKey, err)
		}
		return c, nil
	}
	c, err := config.LoadCDKJSON("cdk.json")
	if err != nil {
		return nil, fmt.Errorf("no %q or %q context value (is the app running outside the CDK CLI?): %w", config.ContextKey, config.ContextFileKey, err)
	}
	return c, nil
}
